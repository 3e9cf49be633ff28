import { once } from 'node:events';
import net, { type Server, type Socket } from 'node:net';
import { startNode } from './cluster-support.js';
import type { TestServer } from './server.js';
import { readAll } from './tcp-support.js';

// Two nodes of a cluster on one machine must both listen on a TCP tunnel's port: each binds its
// own loopback address. Node a keeps the harness's 127.0.0.1; a second node gets SECOND_HOST.

/** The loopback address of the second node (every 127/8 address is this machine's on Linux). */
export const SECOND_HOST = '127.0.0.2';

/** Starts a node listening on `host` alone (its internal link too), with the TCP port range `range`. */
export function startNodeOn(databaseUrl: string, nodeId: string, host: string, range: string): Promise<TestServer> {
  return startNode(databaseUrl, nodeId, { env: { SVC_TCP_PORTS: range, SVC_BIND_HOST: host, SVC_NODE_URL: `http://${host}:0` } });
}

/** Connects to `host:port` from the local address `from`, so the visitor's address is known. */
export async function connectFrom(host: string, port: number, from = '127.0.0.1'): Promise<Socket> {
  const socket = net.connect({ host, port, localAddress: from, allowHalfOpen: true });
  await once(socket, 'connect');
  return socket;
}

/** Sends `text`, ends, and reads the answer to its end: one exchange with an echo service. */
export async function exchange(host: string, port: number, text: string, from?: string): Promise<string> {
  const socket = await connectFrom(host, port, from);
  const received = readAll(socket);
  socket.end(text);
  return (await received).toString();
}

/** Whether `host:port` accepts a connection and answers a byte through the tunnel (false when refused or closed at once). */
export async function answers(host: string, port: number): Promise<boolean> {
  try {
    const socket = await connectFrom(host, port);
    socket.on('error', () => undefined);
    const received = readAll(socket);
    socket.end('?');
    const ok = (await received).length > 0;
    socket.destroy();
    return ok;
  } catch {
    return false;
  }
}

/** A server on `host:port` that closes every connection: another program holding a port. */
export async function holdPort(host: string, port: number): Promise<Server> {
  const server = net.createServer((socket) => socket.destroy());
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
