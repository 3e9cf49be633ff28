import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net, { type Server, type Socket } from 'node:net';
import os from 'node:os';
import { after, before, describe, it } from 'node:test';
import { forward } from '@svcrouter/sdk';
import { startServer, type TestServer } from './harness/index.js';
import { connectTcp, portOf, tcpPortRange } from './harness/tcp-support.js';

// TCP keepalive where it can notice a dead peer, and nowhere else, read from the kernel's own
// table of sockets (/proc/net/tcp and tcp6): the edge's visitor sockets carry a keepalive timer
// of about a minute; the agent's connection to a local service on this machine's loopback
// carries none; its connection to a service on another address of the machine does.

/** `tr` in /proc/net/tcp: the kind of timer pending on a socket (0 none, 1 retransmit, 2 keepalive…). */
const KEEPALIVE_TIMER = 2;
/** /proc/net/tcp counts a timer's time left in clock ticks (USER_HZ). */
const TICKS_PER_SECOND = 100;

interface KernelSocket {
  localPort: number;
  remotePort: number;
  timer: number;
  /** Seconds until the timer fires. */
  timerS: number;
}

/** Every established TCP socket of the machine, IPv4 and IPv6. */
function establishedSockets(): KernelSocket[] {
  const sockets: KernelSocket[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 6 || fields[3] !== '01') continue;
      const [timer, when] = fields[5]!.split(':');
      sockets.push({
        localPort: parseInt(fields[1]!.split(':')[1]!, 16),
        remotePort: parseInt(fields[2]!.split(':')[1]!, 16),
        timer: parseInt(timer!, 16),
        timerS: parseInt(when!, 16) / TICKS_PER_SECOND,
      });
    }
  }
  return sockets;
}

/** The kernel's socket with these ports (exactly one). */
function kernelSocket(localPort: number, remotePort: number): KernelSocket {
  const found = establishedSockets().filter((s) => s.localPort === localPort && s.remotePort === remotePort);
  assert.equal(found.length, 1, `one established socket ${localPort} → ${remotePort}`);
  return found[0]!;
}

/** A local service on `host` that answers each byte with the same byte; it hands over each accepted socket. */
async function echoService(host: string): Promise<{ server: Server; port: number; accepted: Socket[] }> {
  const accepted: Socket[] = [];
  const server = net.createServer((socket) => {
    accepted.push(socket);
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  server.listen(0, host);
  await once(server, 'listening');
  return { server, port: (server.address() as net.AddressInfo).port, accepted };
}

/** This machine's first IPv4 address that is not loopback. */
function otherAddress(): string {
  for (const addresses of Object.values(os.networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === 'IPv4' && !address.internal) return address.address;
  }
  throw new Error('this machine has no IPv4 address besides loopback');
}

describe('tcp tunnels: keepalive', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(20) } });
  });
  after(async () => {
    await server?.close();
  });

  /** One visitor connection through a tunnel to `host`, a byte echoed; then the kernel's view of its three sockets. */
  async function connectionThrough(host: string): Promise<{ visitor: KernelSocket; local: KernelSocket }> {
    const service = await echoService(host);
    const tunnel = await forward({ proto: 'tcp', addr: `${host}:${service.port}`, token: server.token!, serverUrl: server.url });
    try {
      const tunnelPort = portOf(tunnel.url);
      const socket = await connectTcp(tunnelPort);
      socket.write('x');
      await once(socket, 'data');
      const local = service.accepted[0]!;
      const views = {
        // The edge's end of the visitor's connection: its port is the tunnel's, its peer the visitor.
        visitor: kernelSocket(tunnelPort, socket.localPort!),
        // The agent's end of its connection to the service.
        local: kernelSocket(local.remotePort!, service.port),
      };
      socket.destroy();
      return views;
    } finally {
      await tunnel.close();
      service.server.close();
      for (const socket of service.accepted) socket.destroy();
    }
  }

  it('probes idle visitor connections after a minute, and not the agent’s loopback connection to the service', async () => {
    const { visitor, local } = await connectionThrough('127.0.0.1');
    assert.equal(visitor.timer, KEEPALIVE_TIMER);
    assert.ok(visitor.timerS > 50 && visitor.timerS <= 60, `keepalive in ${visitor.timerS} s`);
    assert.equal(local.timer, 0, 'no timer on the loopback connection');
  });

  it('probes the agent’s connection to a service on another address', async () => {
    const { visitor, local } = await connectionThrough(otherAddress());
    assert.equal(visitor.timer, KEEPALIVE_TIMER);
    assert.equal(local.timer, KEEPALIVE_TIMER);
    assert.ok(local.timerS > 50 && local.timerS <= 60, `keepalive in ${local.timerS} s`);
  });
});
