import net from 'node:net';
import type { LocalTarget, TcpTarget } from '@svcrouter/sdk';
import { notListeningWarning } from './failure.js';
import type { Output } from './output.js';

/** How long the start-up probe waits for the local service to accept a connection. */
const PROBE_TIMEOUT_MS = 1000;

/**
 * Opens and closes one TCP connection to the local target. Resolves undefined when something
 * accepts it, else the socket's error code (ECONNREFUSED…): a hint for the user, never a reason
 * not to start, since the service may come up later.
 */
export function probeLocal(target: LocalTarget | { host: string; port: number }): Promise<string | undefined> {
  let host: string;
  let port: number;
  if ('origin' in target) {
    const url = new URL(target.origin);
    port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    // URL keeps IPv6 literals bracketed; net.connect wants them bare.
    host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  } else {
    ({ host, port } = target);
  }
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: PROBE_TIMEOUT_MS });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('ETIMEDOUT');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** What the output shows as a tunnel's local side: the URL, or a TCP tunnel's `host:port`. */
export function localOf(target: LocalTarget | TcpTarget): string {
  return 'origin' in target ? target.origin : target.hostPort;
}

/**
 * Warns once about each local service of a tunnel where nothing listens yet: its target and each
 * route's (`--route /api=4000`), each service named once. Never throws; the tunnel is live anyway.
 */
export async function warnWhereNothingListens(
  target: LocalTarget | TcpTarget,
  routeTargets: readonly LocalTarget[],
  output: Pick<Output, 'warning'>,
): Promise<void> {
  const raw = !('origin' in target);
  const seen = new Set<string>();
  for (const each of [target, ...routeTargets]) {
    const local = localOf(each);
    if (seen.has(local)) continue;
    seen.add(local);
    const code = await probeLocal('origin' in each ? each : { host: each.host, port: each.port });
    if (code !== undefined) output.warning(notListeningWarning(local, code, raw));
  }
}
