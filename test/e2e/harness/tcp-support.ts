import { once } from 'node:events';
import net, { type Server, type Socket } from 'node:net';
import { randomInt } from 'node:crypto';
import { forward, type ForwardOptions, type Tunnel } from '@svcrouter/sdk';
import { startServer, type TestServer } from './index.js';

/** A local TCP service for tests: echoes, or runs `onSocket`. Listens on port 0. */
export async function startTcpService(
  onSocket?: (socket: Socket) => void,
): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (onSocket) onSocket(socket);
    else socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    server,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Connects to a tunnel's port on loopback. */
export async function connectTcp(port: number): Promise<Socket> {
  const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  await once(socket, 'connect');
  return socket;
}

/** Reads a socket to its end (FIN), as one buffer. */
export async function readAll(socket: Socket): Promise<Buffer> {
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'end');
  return Buffer.concat(chunks);
}

/**
 * `SVC_TCP_PORTS` for a test server: `size` ports from a random start below the kernel's
 * ephemeral range (32768 and up on Linux), where outgoing connections never sit on them. The
 * first is checked to be free; the edge skips any other that a program holds.
 */
export async function tcpPortRange(size = 1): Promise<string> {
  for (;;) {
    const from = 21_000 + randomInt(11_000 - size);
    if (await canListen(from)) return `${from}-${from + size - 1}`;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '::', () => server.close(() => resolve(true)));
  });
}

/** The port of a `tcp://host:port` URL. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}

export type TcpService = Awaited<ReturnType<typeof startTcpService>>;

export interface TcpTunnelSetup {
  /** The server's environment besides its port range. */
  env?: Record<string, string>;
  /** What the local service does with a connection; it echoes by default. */
  onSocket?: (socket: Socket) => void;
  /** Options of the tunnel's forward() besides its address, token and server. */
  forward?: Partial<ForwardOptions>;
  /** The agent's token, made on the server (a key the test revokes); the server's own by default. */
  token?: (server: TestServer) => Promise<string>;
}

/** A server with a TCP port range, a local TCP service and a tunnel to it, for `use`; all closed after it. */
export async function withTcpTunnel(
  use: (context: { server: TestServer; service: TcpService; tunnel: Tunnel }) => Promise<void>,
  setup: TcpTunnelSetup = {},
): Promise<void> {
  const server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(100), ...setup.env } });
  const service = await startTcpService(setup.onSocket);
  try {
    const token = setup.token ? await setup.token(server) : server.token!;
    const tunnel = await forward({ ...setup.forward, proto: 'tcp', addr: service.port, token, serverUrl: server.url });
    try {
      await use({ server, service, tunnel });
    } finally {
      await tunnel.close();
    }
  } finally {
    await service.close();
    await server.close();
  }
}
