import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { forward, Messages, type CapturedRequest, type TcpConnectionLog, type Tunnel } from '@svcrouter/sdk';
import { SseClient } from '@svcrouter/testkit/sse-client';
import { recordArrives } from './harness/api-helpers.js';
import { startServer, type TestServer } from './harness/index.js';
import { connectTcp, portOf, readAll, startTcpService, tcpPortRange } from './harness/tcp-support.js';

// TCP tunnels through a real server process and the SDK's forward({ proto: 'tcp' }): bytes both
// ways unchanged, each direction's FIN on its own, a refused local port, and one inspector
// record per connection.

describe('tcp tunnels', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(200) } });
  });
  after(async () => {
    await server?.close();
  });

  async function tunnelTo(port: number, options: { proxyProtocol?: 'v1' | 'v2' } = {}): Promise<Tunnel> {
    return forward({ proto: 'tcp', addr: port, token: server.token!, serverUrl: server.url, ...options });
  }

  it('prints a tcp:// address and carries bytes both ways', async () => {
    const echo = await startTcpService();
    const tunnel = await tunnelTo(echo.port);
    try {
      assert.match(tunnel.url, /^tcp:\/\/localhost:\d+$/);
      const socket = await connectTcp(portOf(tunnel.url));
      const got = readAll(socket);
      socket.end('hello through tcp');
      assert.equal((await got).toString(), 'hello through tcp');
    } finally {
      await tunnel.close();
      await echo.close();
    }
  });

  it('carries a half-close from the visitor: the service answers after the visitor FIN', async () => {
    // The service reads to the end, then answers and closes: only a FIN that travelled lets it.
    const service = await startTcpService((socket) => {
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => socket.end(`got ${Buffer.concat(chunks).length} bytes`));
    });
    const tunnel = await tunnelTo(service.port);
    try {
      const socket = await connectTcp(portOf(tunnel.url));
      const got = readAll(socket);
      socket.end(Buffer.alloc(100_000, 7));
      assert.equal((await got).toString(), 'got 100000 bytes');
    } finally {
      await tunnel.close();
      await service.close();
    }
  });

  it('carries a half-close from the service: the visitor still sends after the service FIN', async () => {
    const service = await startTcpService((socket) => {
      socket.end('bye first');
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => received.resolve(Buffer.concat(chunks).toString()));
    });
    const received = deferred<string>();
    const tunnel = await tunnelTo(service.port);
    try {
      const socket = await connectTcp(portOf(tunnel.url));
      const got = readAll(socket);
      assert.equal((await got).toString(), 'bye first');
      socket.end('still talking');
      assert.equal(await received.promise, 'still talking');
    } finally {
      await tunnel.close();
      await service.close();
    }
  });

  it('closes the visitor at once when the local port refuses, and records 502', async () => {
    const gone = await startTcpService();
    const port = gone.port;
    await gone.close();
    const tunnel = await tunnelTo(port);
    try {
      const logged = once(tunnel, 'connection') as Promise<[TcpConnectionLog]>;
      const socket = await connectTcp(portOf(tunnel.url));
      socket.on('error', () => undefined);
      // Closed from the edge's side before a byte: the visitor reads its end at once.
      assert.equal((await readAll(socket)).length, 0);
      socket.destroy();
      const [log] = await logged;
      assert.equal(log.outcome, 'refused');
      const record = await recordOf(tunnel, 502);
      assert.equal(record.method, 'TCP');
      assert.equal(record.proto, 'tcp');
      assert.equal(record.path, '');
    } finally {
      await tunnel.close();
    }
  });

  it('bills none of the bytes a visitor sent to a refused local port', async () => {
    // An account of its own: its usage is this test's bytes only.
    const token = await server.createAccount('refused-bytes@example.com');
    const gone = await startTcpService();
    await gone.close();
    const echo = await startTcpService();
    const refused = await forward({ proto: 'tcp', addr: gone.port, token, serverUrl: server.url });
    const answered = await forward({ proto: 'tcp', addr: echo.port, token, serverUrl: server.url });
    try {
      const socket = await connectTcp(portOf(refused.url));
      // Cut by the edge mid-write: a reset, not an end (events.once would reject on it).
      const closed = new Promise((resolve) => socket.on('close', resolve));
      socket.on('error', () => undefined);
      // More than the stream window, so bytes cross to the agent before its refusal comes back.
      socket.write(Buffer.alloc(8 * 1024 * 1024));
      await closed;
      const record = await recordOf(refused, 502, token);
      assert.equal(record.bytes, 0);
      // Usage is flushed in batches: once an answered connection's bytes are in, the refused one's would be too.
      const other = await connectTcp(portOf(answered.url));
      const got = readAll(other);
      other.end('12345');
      await got;
      let used = 0;
      for (let attempt = 0; attempt < 200 && used < 10; attempt++) {
        const response = await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${token}` } });
        used = ((await response.json()) as { used: { bandwidthBytes: number } }).used.bandwidthBytes;
        if (used < 10) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(used, 10);
    } finally {
      await refused.close();
      await answered.close();
      await echo.close();
    }
  });

  it('records a closed connection with both directions counted', async () => {
    const echo = await startTcpService();
    const tunnel = await tunnelTo(echo.port);
    try {
      const socket = await connectTcp(portOf(tunnel.url));
      const got = readAll(socket);
      socket.end('12345');
      await got;
      const record = await recordOf(tunnel, 200);
      assert.equal(record.bytes, 10);
      assert.equal(record.host, new URL(tunnel.url).host);
      assert.equal(record.ip, '127.0.0.1');
    } finally {
      await tunnel.close();
      await echo.close();
    }
  });

  it('follows a TCP connection on the live stream as it closes (GET /v1/requests/stream)', async () => {
    const echo = await startTcpService();
    const tunnel = await tunnelTo(echo.port);
    const host = new URL(tunnel.url).host;
    let stream: SseClient | undefined;
    try {
      // Without `since` the stream carries live records only, and the edge subscribes before it
      // sends the headers: once they are here, the connection's record can only come live.
      stream = await SseClient.open(`${server.url}/v1/requests/stream?host=${encodeURIComponent(host)}`, {
        headers: { authorization: `Bearer ${server.token!}` },
      });
      assert.equal(stream.status, 200);
      const socket = await connectTcp(portOf(tunnel.url));
      const got = readAll(socket);
      socket.end('live');
      assert.equal((await got).toString(), 'live');
      await stream.until(() => stream!.count() > 0, "the connection's record");
      const record = JSON.parse(stream.named()[0]!.data!) as CapturedRequest;
      assert.deepEqual(
        [record.method, record.path, record.proto, record.status, record.bytes, record.host],
        ['TCP', '', 'tcp', 200, 8, host],
      );
    } finally {
      stream?.close();
      await tunnel.close();
      await echo.close();
    }
  });

  it('refuses a tunnel when the port range is used up: No TCP port available', async () => {
    const small = await startServer({ env: { SVC_TCP_PORTS: await tcpPortRange(1) } });
    const echo = await startTcpService();
    try {
      const first = await forward({ proto: 'tcp', addr: echo.port, token: small.token!, serverUrl: small.url });
      await assert.rejects(forward({ proto: 'tcp', addr: echo.port, token: small.token!, serverUrl: small.url }), {
        message: Messages.TCP_PORT_UNAVAILABLE,
      });
      await first.close();
      // Given back on a clean exit: the next run gets it.
      const again = await forward({ proto: 'tcp', addr: echo.port, token: small.token!, serverUrl: small.url });
      assert.equal(again.url, first.url);
      await again.close();
    } finally {
      await echo.close();
      await small.close();
    }
  });

  /** The tunnel's inspector record with `status`, once the edge has written it (`token`: of the tunnel's account). */
  function recordOf(tunnel: Tunnel, status: number, token = server.token!): Promise<CapturedRequest> {
    return recordArrives(server, token, { host: new URL(tunnel.url).host, status });
  }
});

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
