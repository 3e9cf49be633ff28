import { once } from 'node:events';
import net from 'node:net';
import { Mux } from '@svcrouter/protocol';
import type { TcpProxy, TcpTarget } from './tcp-proxy.js';

// A TCP tunnel's agent in a test: a real local echo service, and a real mux session over
// loopback whose agent end hands every stream to a TcpProxy. Not exported from index.ts.

/** A local service that echoes, and ends its side once the client ended its own. */
export interface EchoService {
  target: TcpTarget;
  close(): Promise<void>;
}

export async function startEchoService(): Promise<EchoService> {
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return { target: { host: '127.0.0.1', port, hostPort: `127.0.0.1:${port}` }, close: () => closeServer(server) };
}

/** The edge's end of a session whose agent end serves its streams with `proxy`. */
export interface ProxySession {
  edge: Mux;
  /** Ends the session and closes the proxy's local connections. */
  close(): Promise<void>;
}

export async function proxySession(proxy: TcpProxy): Promise<ProxySession> {
  const listener = net.createServer();
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const accepted = once(listener, 'connection') as Promise<[net.Socket]>;
  const dialerSocket = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
  const [[acceptorSocket]] = await Promise.all([accepted, once(dialerSocket, 'connect')]);
  new Mux(dialerSocket, { role: 'dialer', onStream: (stream) => proxy.handle(stream) });
  const edge = new Mux(acceptorSocket, { role: 'acceptor' });
  return {
    edge,
    close: async () => {
      await proxy.close();
      edge.destroy();
      dialerSocket.destroy();
      acceptorSocket.destroy();
      await closeServer(listener);
    },
  };
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
