import type { JSX } from 'preact';
import { ErrorText, Loading, PageHeader } from '../components/bits.js';
import { Meter } from '../components/meter.js';
import { api } from '../lib/api.js';
import { formatBytes } from '../lib/format.js';
import { Link } from '../lib/router.js';
import { useAccount } from '../lib/session.js';
import type { Usage } from '../lib/types.js';
import { useResource } from '../lib/use-resource.js';

/** Plan, its limits as bars, and the commands to start a first tunnel against this server. */
export function OverviewPage(): JSX.Element {
  const account = useAccount();
  const usage = useResource(() => api<Usage>('GET', '/v1/usage'), []);
  return (
    <section>
      <PageHeader title="Overview" />
      <ErrorText message={usage.error} />
      <div class="grid two">
        <article class="card">
          <h2>
            Plan: <span class="plan">{account.plan}</span>
          </h2>
          {usage.data ? <Meters usage={usage.data} /> : usage.loading && <Loading />}
        </article>
        <GetStarted />
      </div>
    </section>
  );
}

function Meters({ usage }: { usage: Usage }): JSX.Element {
  const { used, limits } = usage;
  return (
    <div class="stack">
      <Meter label="Tunnels" value={used.tunnels} max={limits.tunnels} text={`${used.tunnels} / ${limits.tunnels}`} />
      <Meter label="Custom domains" value={used.domains} max={limits.domains} text={`${used.domains} / ${limits.domains}`} />
      <Meter
        label="Transfer this month"
        value={used.bandwidthBytes}
        max={limits.bandwidthBytes}
        text={`${formatBytes(used.bandwidthBytes)} of ${formatBytes(limits.bandwidthBytes)}`}
      />
    </div>
  );
}

/** The exact commands, with this server's address (the page's own origin) filled in. */
function GetStarted(): JSX.Element {
  const server = location.origin;
  return (
    <article class="card">
      <h2>Get started</h2>
      <ol class="steps">
        <li>
          Create an agent token under <Link href="/tokens">Tokens</Link>.
        </li>
        <li>
          With something listening on port 3000, run:
          <pre>
            <code>{`SVC_SERVER=${server} SVC_TOKEN=<your token> npx svc http 3000`}</code>
          </pre>
        </li>
        <li>
          Open the URL it prints; requests show up under <Link href="/traffic">Traffic</Link>.
        </li>
      </ol>
    </article>
  );
}
