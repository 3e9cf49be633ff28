import {
  DEFAULT_WEBHOOK_MAX_BODY,
  parseRateLimit,
  parseSize,
  parseVerifyWebhook,
  trafficPolicyProblem,
  type RateLimitRule,
  type TrafficPolicy,
  type TrafficRule,
} from '@svcrouter/protocol';

/**
 * A tunnel's traffic rules as a caller gives them (forward(), the agent's flags, a config file's
 * tunnel or its `policy:` block): header rules as `Name: value` / `Name`, the rate limit as
 * `100/1m`, the webhook check as `provider:secret`, sizes as `1MiB`. `trafficPolicy` turns them
 * into the wire form (protocol's TrafficPolicy), which `trafficPolicyProblem` then checks.
 */
export interface TrafficOptions {
  /** `Name: value` headers set on every request to the local service (a visitor's own value is replaced). */
  requestHeaderAdd?: string | readonly string[];
  /** Header names removed from every request. */
  requestHeaderRemove?: string | readonly string[];
  /** `Name: value` headers set on every response of the local service. */
  responseHeaderAdd?: string | readonly string[];
  /** Header names removed from every response. */
  responseHeaderRemove?: string | readonly string[];
  /** `100/1m` (s, m, h) or {count, windowMs}: per visitor address, a sliding window; over it, 429. */
  rateLimit?: string | RateLimitRule;
  /** `provider:secret` or {provider, secret, maxBody?}: check webhook signatures before the local service sees the request. */
  verifyWebhook?: string | { provider: string; secret: string; maxBody?: number | string };
  /** Largest webhook body checked (`1MiB`, `512KiB`, bytes; default 1 MiB); larger: 413. */
  verifyWebhookMaxBody?: number | string;
  /** Edge rules in order: a match and one action (redirect, respond, rewrite). */
  rules?: readonly TrafficRule[];
}

/** The keys of TrafficOptions, in their documented order. */
export const TRAFFIC_OPTION_KEYS = [
  'requestHeaderAdd',
  'requestHeaderRemove',
  'responseHeaderAdd',
  'responseHeaderRemove',
  'rateLimit',
  'verifyWebhook',
  'verifyWebhookMaxBody',
  'rules',
] as const;

/** The wire form of the options, or the first problem as `key: message` (the secret never in it). */
export function trafficPolicy(options: TrafficOptions): TrafficPolicy | string {
  const policy: TrafficPolicy = {};
  for (const key of ['requestHeaderAdd', 'requestHeaderRemove', 'responseHeaderAdd', 'responseHeaderRemove'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    policy[key] = typeof value === 'string' ? [value] : [...value];
  }
  if (options.rateLimit !== undefined) {
    const rate = typeof options.rateLimit === 'string' ? parseRateLimit(options.rateLimit) : options.rateLimit;
    if (typeof rate === 'string') return `rateLimit: ${rate}`;
    policy.rateLimit = rate;
  }
  if (options.verifyWebhookMaxBody !== undefined && options.verifyWebhook === undefined) {
    return 'verifyWebhookMaxBody: needs verifyWebhook';
  }
  if (options.verifyWebhook !== undefined) {
    const maxBody = sizeOf(
      typeof options.verifyWebhook === 'object'
        ? (options.verifyWebhook.maxBody ?? options.verifyWebhookMaxBody)
        : options.verifyWebhookMaxBody,
    );
    if (typeof maxBody === 'string') return `verifyWebhookMaxBody: ${maxBody}`;
    const webhook =
      typeof options.verifyWebhook === 'string'
        ? parseVerifyWebhook(options.verifyWebhook, maxBody)
        : { provider: options.verifyWebhook.provider, secret: options.verifyWebhook.secret, maxBody };
    if (typeof webhook === 'string') return `verifyWebhook: ${webhook}`;
    policy.verifyWebhook = webhook as TrafficPolicy['verifyWebhook'];
  }
  if (options.rules !== undefined) policy.rules = [...options.rules];
  return trafficPolicyProblem(policy as Record<string, unknown>) ?? policy;
}

/** Why the traffic options are not valid, as `key: message`, or undefined. */
export function trafficProblem(options: TrafficOptions): string | undefined {
  const built = trafficPolicy(options);
  return typeof built === 'string' ? built : undefined;
}

function sizeOf(value: number | string | undefined): number | string {
  if (value === undefined) return DEFAULT_WEBHOOK_MAX_BODY;
  return typeof value === 'number' ? value : parseSize(value);
}
