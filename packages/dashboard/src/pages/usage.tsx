import type { JSX } from 'preact';
import { ErrorText, Loading, PageHeader } from '../components/bits.js';
import { Meter } from '../components/meter.js';
import { UsageChart } from '../components/usage-chart.js';
import { api } from '../lib/api.js';
import { formatBytes } from '../lib/format.js';
import type { DailyUsage, Usage } from '../lib/types.js';
import { useResource } from '../lib/use-resource.js';

/** Days of history the chart shows. */
const HISTORY_DAYS = 30;

/** This month's totals against the plan, and daily transfer and requests as a chart. */
export function UsagePage(): JSX.Element {
  const usage = useResource(() => api<Usage>('GET', '/v1/usage'), []);
  const from = daysAgo(HISTORY_DAYS - 1);
  const to = daysAgo(0);
  const history = useResource(() => api<{ days: DailyUsage[] }>('GET', `/v1/usage/history?from=${from}&to=${to}`), [from, to]);
  const days = history.data?.days ?? [];
  const monthRequests = days.filter((day) => day.date.startsWith(thisMonth())).reduce((sum, day) => sum + day.requests, 0);
  return (
    <section>
      <PageHeader title="Usage" />
      <ErrorText message={usage.error ?? history.error} />
      <div class="grid two">
        <article class="card">
          <h2>This month</h2>
          {usage.data ? (
            <div class="stack">
              <Meter
                label="Transfer"
                value={usage.data.used.bandwidthBytes}
                max={usage.data.limits.bandwidthBytes}
                text={`${formatBytes(usage.data.used.bandwidthBytes)} of ${formatBytes(usage.data.limits.bandwidthBytes)}`}
              />
              <Meter
                label="Tunnels now"
                value={usage.data.used.tunnels}
                max={usage.data.limits.tunnels}
                text={`${usage.data.used.tunnels} / ${usage.data.limits.tunnels}`}
              />
              <Meter
                label="Custom domains"
                value={usage.data.used.domains}
                max={usage.data.limits.domains}
                text={`${usage.data.used.domains} / ${usage.data.limits.domains}`}
              />
              <p>
                Requests this month: <strong>{monthRequests.toLocaleString()}</strong> · plan <span class="plan">{usage.data.plan}</span>
              </p>
            </div>
          ) : (
            usage.loading && <Loading />
          )}
        </article>
        <article class="card">
          <h2>Last {HISTORY_DAYS} days</h2>
          {history.data === undefined ? (
            history.loading && <Loading />
          ) : (
            <>
              {days.length === 0 && <p class="muted">No traffic yet: requests through your tunnels are counted here as they happen.</p>}
              <UsageChart days={days} from={from} to={to} />
            </>
          )}
        </article>
      </div>
    </section>
  );
}

function daysAgo(count: number): string {
  return new Date(Date.now() - count * 86_400_000).toISOString().slice(0, 10);
}

function thisMonth(): string {
  return new Date().toISOString().slice(0, 7);
}
