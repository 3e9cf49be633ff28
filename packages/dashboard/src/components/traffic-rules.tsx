import type { JSX } from 'preact';
import type { Tunnel } from '../lib/types.js';

/** A tunnel's traffic rules in a few words (header names, the limit, the webhook provider, the edge rules); "none" without any. */
export function TrafficRules({ traffic }: { traffic: Tunnel['traffic'] }): JSX.Element {
  const parts: string[] = [];
  const headers = (label: string, names: string[]) => names.length > 0 && parts.push(`${label} ${names.join(', ')}`);
  headers('request +', traffic.requestHeaderAdd);
  headers('request −', traffic.requestHeaderRemove);
  headers('response +', traffic.responseHeaderAdd);
  headers('response −', traffic.responseHeaderRemove);
  if (traffic.rateLimit !== null) parts.push(`limit ${traffic.rateLimit.count}/${windowText(traffic.rateLimit.windowMs)} per visitor`);
  if (traffic.verifyWebhook !== null) parts.push(`${traffic.verifyWebhook.provider} webhook signatures`);
  if (parts.length === 0 && traffic.rules.length === 0) return <span class="muted">none</span>;
  return (
    <span>
      {parts.join(' · ')}
      {traffic.rules.length > 0 && (
        <ol class="traffic-rules">
          {traffic.rules.map((rule) => (
            <li>{rule}</li>
          ))}
        </ol>
      )}
    </span>
  );
}

function windowText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}
