import net from 'node:net';
import type { LocalTarget } from '@svcrouter/sdk';

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
