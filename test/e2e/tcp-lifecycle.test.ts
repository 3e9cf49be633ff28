import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { forward, Messages, type TcpConnectionLog, type Tunnel, type TunnelEvents } from '@svcrouter/sdk';
import { AGENT_BIN, api, spawnNode, startServer, withRestartableServer, type TestServer } from './harness/index.js';
import { connectTcp, portOf, readAll, startTcpService, tcpPortRange, withTcpTunnel } from './harness/tcp-support.js';

// A TCP tunnel's life: its port kept across a lost connection, the range used up, the API's
// delete, the quota, PROXY protocol to the local service, and bytes that arrive unchanged in
// bulk and over many connections at once.

/** 1 GiB each way: the service echoes, so both directions at once. */
const BULK_BYTES = 1024 * 1024 * 1024;

describe('tcp tunnel lifecycle', () => {
  it('keeps its port across a server restart (SIGKILL), within the grace period', async () => {
    const range = await tcpPortRange(100);
    const echo = await startTcpService();
    await withRestartableServer(
      async (first, restart) => {
        const tunnel = await forward({ proto: 'tcp', addr: echo.port, token: first.token!, serverUrl: first.url });
        try {
          const before = tunnel.url;
          const reconnected = once(tunnel, 'reconnected') as Promise<TunnelEvents['reconnected']>;
          await first.proc.kill('SIGKILL');
          await restart();
          const [url] = await reconnected;
          assert.equal(url, before);
          const socket = await connectTcp(portOf(url));
          const got = readAll(socket);
          socket.end('after restart');
          assert.equal((await got).toString(), 'after restart');
        } finally {
          await tunnel.close();
        }
      },
      { env: { SVC_TCP_PORTS: range } },
    );
    await echo.close();
  });

  it('prints No TCP port available and exits 1 when the range is used up', async () => {
    const server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(1) } });
    const echo = await startTcpService();
    const holder = await forward({ proto: 'tcp', addr: echo.port, token: server.token!, serverUrl: server.url });
    try {
      const proc = spawnNode(AGENT_BIN, ['tcp', String(echo.port)], { SVC_SERVER: server.url, SVC_TOKEN: server.token }, 'agent');
      const { code } = await proc.exited;
      assert.equal(code, 1);
      assert.match(
        proc.stderrLines.join('\n'),
        new RegExp(`^${Messages.TCP_PORT_UNAVAILABLE}\nhint: every port of the edge's TCP range is in use`, 'm'),
      );
    } finally {
      await holder.close();
      await echo.close();
      await server.close();
    }
  });

  it('closes open connections when the tunnel is deleted through the API', () =>
    withTcpTunnel(async ({ server, tunnel }) => {
      const socket = await connectTcp(portOf(tunnel.url));
      socket.on('error', () => undefined);
      socket.write('x');
      await once(socket, 'data');
      const ended = once(tunnel, 'end');
      // Listened for before the call: the edge closes the connection before it answers.
      const cut = once(socket, 'end');
      const deleted = await api(server, 'DELETE', `/v1/tunnels/${tunnel.id}`, { token: server.token! });
      assert.equal(deleted.status, 204, deleted.text);
      await cut;
      await ended;
      socket.destroy();
    }));

  it('closes open connections when the agent token is revoked', async () => {
    let keyId = '';
    const token = async (server: TestServer): Promise<string> => {
      const key = (await api(server, 'POST', '/v1/keys', { token: server.token! }, { description: 'tcp' })).body as {
        id: string;
        token: string;
      };
      keyId = key.id;
      return key.token;
    };
    await withTcpTunnel(
      async ({ server, tunnel }) => {
        const socket = await connectTcp(portOf(tunnel.url));
        socket.on('error', () => undefined);
        socket.write('x');
        await once(socket, 'data');
        const cut = new Promise((resolve) => socket.once('end', resolve).once('close', resolve));
        const ended = once(tunnel, 'end');
        assert.equal((await api(server, 'DELETE', `/v1/keys/${keyId}`, { token: server.token! })).status, 204);
        await cut;
        await ended;
        socket.destroy();
      },
      { token },
    );
  });

  it('closes a connection idle for the idle timeout, and says so', () =>
    withTcpTunnel(
      async ({ tunnel }) => {
        const logged = once(tunnel, 'connection') as Promise<[TcpConnectionLog]>;
        const socket = await connectTcp(portOf(tunnel.url));
        socket.on('error', () => undefined);
        socket.write('once');
        socket.resume();
        // Nothing more is sent: the agent closes it, and the visitor sees the end.
        const cut = new Promise((resolve) => socket.once('end', resolve).once('close', resolve));
        await cut;
        const [log] = await logged;
        assert.equal(log.outcome, 'idle');
        assert.ok(log.durationMs >= 300);
        socket.destroy();
      },
      { forward: { idleTimeoutMs: 300 } },
    ));

  it('cuts a connection once the monthly quota is used up', () => {
    const quota = 1024 * 1024;
    return withTcpTunnel(
      async ({ tunnel }) => {
        const socket = await connectTcp(portOf(tunnel.url));
        socket.on('error', () => undefined);
        let sent = 0;
        const piece = Buffer.alloc(64 * 1024);
        // The edge cuts with a reset: 'close' comes with or without an 'error' before it.
        const closed = new Promise((resolve) => socket.once('close', resolve));
        // Keeps sending until the edge cuts: far more than the quota would be sent otherwise.
        const pump = (): void => {
          while (!socket.destroyed && sent < 16 * quota) {
            sent += piece.length;
            if (!socket.write(piece)) return void socket.once('drain', pump);
          }
        };
        pump();
        await closed;
        assert.ok(sent < 16 * quota, `sent ${sent} bytes before the cut`);
      },
      { env: { SVC_PLANS: JSON.stringify({ free: { bandwidthBytes: quota } }) }, onSocket: (socket) => socket.resume() },
    );
  });

  it('sends the visitor address first with --proxy-protocol v1 and v2', async () => {
    const server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(100) } });
    const heads: Buffer[] = [];
    const service = await startTcpService((socket) => socket.once('data', (chunk: Buffer) => (heads.push(chunk), socket.end())));
    try {
      for (const version of ['v1', 'v2'] as const) {
        const tunnel: Tunnel = await forward({
          proto: 'tcp',
          addr: service.port,
          token: server.token!,
          serverUrl: server.url,
          proxyProtocol: version,
        });
        const socket = await connectTcp(portOf(tunnel.url));
        const visitorPort = socket.localPort!;
        await readAll(socket);
        const head = heads.at(-1)!;
        if (version === 'v1')
          assert.equal(head.toString('latin1'), `PROXY TCP4 127.0.0.1 0.0.0.0 ${visitorPort} ${portOf(tunnel.url)}\r\n`);
        else {
          assert.equal(head.subarray(0, 12).toString('hex'), '0d0a0d0a000d0a515549540a');
          assert.equal(head[13], 0x11);
          assert.equal([...head.subarray(16, 20)].join('.'), '127.0.0.1');
          assert.equal(head.readUInt16BE(24), visitorPort);
        }
        await tunnel.close();
      }
    } finally {
      await service.close();
      await server.close();
    }
  });

  it('hints that the local service may not speak PROXY protocol when it closes right after the header', () =>
    withTcpTunnel(
      async ({ tunnel }) => {
        const logged = once(tunnel, 'connection') as Promise<[TcpConnectionLog]>;
        const socket = await connectTcp(portOf(tunnel.url));
        socket.on('error', () => undefined);
        socket.resume();
        // Closed from the other end: the visitor closes its side too, as a real client does.
        socket.once('end', () => socket.end());
        const [log] = await logged;
        assert.match(log.detail ?? '', /may not speak PROXY protocol \(v1\)/);
        socket.destroy();
      },
      // Like a service without PROXY protocol that rejects the header as garbage: it hangs up at once.
      { onSocket: (socket) => socket.once('data', () => socket.destroy()), forward: { proxyProtocol: 'v1' } },
    ));

  it('carries 1 GiB each way unchanged (sha256), and 1,000 connections at once', () =>
    withTcpTunnel(async ({ tunnel }) => {
      const port = portOf(tunnel.url);
      const socket = await connectTcp(port);
      const sent = createHash('sha256');
      const received = createHash('sha256');
      let got = 0;
      socket.on('data', (chunk: Buffer) => {
        got += chunk.length;
        received.update(chunk);
      });
      const ended = once(socket, 'end');
      const block = randomBytes(1024 * 1024);
      for (let i = 0; i < BULK_BYTES / block.length; i++) {
        sent.update(block);
        if (!socket.write(block)) await once(socket, 'drain');
      }
      socket.end();
      await ended;
      assert.equal(got, BULK_BYTES);
      assert.equal(received.digest('hex'), sent.digest('hex'));

      const answers = await Promise.all(
        Array.from({ length: 1000 }, async (_, i) => {
          const c = await connectTcp(port);
          const all = readAll(c);
          c.end(`connection ${i}`);
          return (await all).toString();
        }),
      );
      answers.forEach((answer, i) => assert.equal(answer, `connection ${i}`));
    }));
});
