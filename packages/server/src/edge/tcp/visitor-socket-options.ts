import type { Server, Socket } from 'node:net';

/** Keepalive probes on visitor sockets start after this much silence, so dead peers are noticed. */
export const TCP_KEEPALIVE_MS = 60_000;

/** The part of a listening socket's handle (libuv's TCP handle) that sets its options. */
interface OptionHandle {
  setNoDelay(enable: boolean): number;
  setKeepAlive(enable: boolean, initialDelaySeconds: number): number;
}

/**
 * Sets no-delay and keepalive once, on a TCP tunnel's listening socket, where Linux's accepted
 * sockets inherit them (the listener's socket is cloned for each connection, options included):
 * five system calls fewer for every visitor connection than `setNoDelay` and `setKeepAlive` on
 * each socket (keepalive alone is four `setsockopt`s). Node offers no public way to set them on a
 * listener, so this reaches its handle, and answers false wherever that or the inheritance is not
 * there (another system, a Node whose handle lacks the methods): the caller then sets them per
 * socket (`setVisitorSocketOptions`). Call once the server is listening.
 */
export function inheritVisitorSocketOptions(server: Server): boolean {
  if (process.platform !== 'linux') return false;
  const handle = (server as unknown as { _handle?: Partial<OptionHandle> | null })._handle;
  if (typeof handle?.setNoDelay !== 'function' || typeof handle.setKeepAlive !== 'function') return false;
  // Both answer libuv's status: 0, or a negative errno.
  const noDelay = handle.setNoDelay(true);
  const keepAlive = handle.setKeepAlive(true, TCP_KEEPALIVE_MS / 1000);
  return noDelay === 0 && keepAlive === 0;
}

/** No-delay and keepalive on one visitor socket, for a listener whose sockets do not inherit them. */
export function setVisitorSocketOptions(socket: Socket): void {
  socket.setKeepAlive(true, TCP_KEEPALIVE_MS);
  socket.setNoDelay(true);
}
