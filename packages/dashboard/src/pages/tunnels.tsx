import type { JSX } from 'preact';
import { EmptyState, ErrorText, Loading, PageHeader, TableHead } from '../components/bits.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { CopyButton } from '../components/copy-button.js';
import { TrafficRules } from '../components/traffic-rules.js';
import { api } from '../lib/api.js';
import { formatTime } from '../lib/format.js';
import type { Tunnel } from '../lib/types.js';
import { useResource } from '../lib/use-resource.js';

/** How often the list is refreshed, so agents connecting or leaving show up without a reload. */
const POLL_MS = 2000;

/** The account's tunnels, live ones first, each online one with a Stop button. */
export function TunnelsPage(): JSX.Element {
  const tunnels = useResource(() => api<{ tunnels: Tunnel[] }>('GET', '/v1/tunnels'), [], POLL_MS);
  const list = tunnels.data?.tunnels ?? [];
  const sorted = [...list].sort((a, b) => Number(b.status === 'online') - Number(a.status === 'online'));
  return (
    <section>
      <PageHeader title="Tunnels">
        <span class="muted">{list.filter((t) => t.status === 'online').length} online · refreshes every 2 s</span>
      </PageHeader>
      <ErrorText message={tunnels.error} />
      {tunnels.data === undefined ? (
        tunnels.loading && <Loading />
      ) : list.length === 0 ? (
        <EmptyState>
          No tunnels yet: run <code>svc http 3000</code>
        </EmptyState>
      ) : (
        <div class="table-wrap">
          <table class="cards" role="table">
            <TableHead columns={['URL', 'Local target', 'Status', 'Access', 'Traffic', 'Started', 'Agent', 'Agent IP']} withActions />
            <tbody role="rowgroup">
              {sorted.map((tunnel) => (
                <TunnelRow key={tunnel.id} tunnel={tunnel} onStopped={tunnels.reload} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function TunnelRow({ tunnel, onStopped }: { tunnel: Tunnel; onStopped: () => Promise<void> }): JSX.Element {
  const online = tunnel.status === 'online';
  return (
    <tr role="row" class={online ? '' : 'dim'}>
      <td role="cell" data-label="URL">
        {tunnel.proto === 'tcp' || tunnel.proto === 'tls' ? (
          // A browser cannot open a tcp:// or tls:// address: it is shown to copy into ssh, psql, openssl and the like.
          <span class="address">
            <code>{tunnel.url}</code> <CopyButton text={tunnel.url} what={tunnel.proto === 'tls' ? 'TLS address' : 'TCP address'} />
          </span>
        ) : (
          <a href={tunnel.url} target="_blank" rel="noopener noreferrer">
            {tunnel.url}
          </a>
        )}
      </td>
      <td role="cell" data-label="Local target">
        <code>{tunnel.local}</code>
      </td>
      <td role="cell" data-label="Status">
        <span class={`badge ${tunnel.status}`}>{tunnel.status}</span>
        {tunnel.pool && (
          <>
            {' '}
            <span class="badge" title="one member of a pool: other agents serve this URL too, and Stop stops this member only">
              pool member
            </span>
          </>
        )}
      </td>
      <td role="cell" data-label="Access">
        <AccessRules access={tunnel.access} />
      </td>
      <td role="cell" data-label="Traffic">
        <TrafficRules traffic={tunnel.traffic} />
      </td>
      <td role="cell" data-label="Started">
        {formatTime(tunnel.createdAt)}
      </td>
      <td role="cell" data-label="Agent">
        {tunnel.agentVersion}
      </td>
      <td role="cell" data-label="Agent IP">
        {tunnel.agentIp}
      </td>
      <td role="cell">
        {online && (
          <ConfirmButton
            label="Stop"
            question={
              <>
                {tunnel.pool ? (
                  <>
                    Stop this member of the pool at <strong>{tunnel.url}</strong>? Its agent is disconnected; the other members keep
                    serving.
                  </>
                ) : (
                  <>
                    Stop the tunnel <strong>{tunnel.url}</strong>? {afterStop(tunnel)}
                  </>
                )}
              </>
            }
            onConfirm={async () => {
              await api('DELETE', `/v1/tunnels/${encodeURIComponent(tunnel.id)}`);
              await onStopped();
            }}
          />
        )}
      </td>
    </tr>
  );
}

/** A tunnel's access rules in a few words: who may sign in, which addresses pass; "public" without rules. */
function AccessRules({ access }: { access: Tunnel['access'] }): JSX.Element {
  const parts: string[] = [];
  if (access.basicAuth.length > 0) parts.push(`basic auth: ${access.basicAuth.join(', ')}`);
  if (access.cidrAllow.length > 0) parts.push(`allow ${access.cidrAllow.join(', ')}`);
  if (access.cidrDeny.length > 0) parts.push(`deny ${access.cidrDeny.join(', ')}`);
  if (access.oidc !== null) {
    const who = [...access.allowEmail, ...access.allowDomain.map((domain) => `@${domain}`)];
    parts.push(`sign-in with ${access.oidc}${who.length > 0 ? `: ${who.join(', ')}` : ''}`);
  }
  if (parts.length === 0) return <span class="muted">public</span>;
  return <span>{parts.join(' · ')}</span>;
}

/** What visitors meet once a tunnel is stopped: a TCP or TLS tunnel has no page to show them. */
function afterStop(tunnel: Tunnel): string {
  if (tunnel.proto === 'tcp') return 'Its agent is disconnected, its open connections close, and the port stops accepting connections.';
  if (tunnel.proto === 'tls') return 'Its agent is disconnected, its open connections close, and new ones are no longer passed through.';
  return 'Its agent is disconnected and the hostname answers “This tunnel is offline”.';
}
