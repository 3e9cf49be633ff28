import assert from 'node:assert/strict';
import { once } from 'node:events';
import type http from 'node:http';
import { describe, it } from 'node:test';
import { ResetCode, type ResponseHead } from '@svcrouter/protocol';
import { IDLE_TIMEOUT_MS } from './origin-pool.js';
import {
  closedPort,
  httpOrigin,
  httpsOrigin,
  openRequest,
  originSetup,
  rawOrigin,
  selfSignedCertificate,
  visit,
} from './origin-test-support.js';

// OriginProxy's connection handling against real origins on loopback: reuse, stale
// connections, framing that rules reuse out, and the resets the edge turns into pages.

describe('OriginProxy connections', () => {
  const setup = originSetup();

  const ok: http.RequestListener = (_req, res) => res.end('ok');

  it('reuses one keep-alive connection for sequential requests', async () => {
    const { origin, fixture } = await setup(await httpOrigin(ok));
    for (let i = 0; i < 5; i++) {
      const result = await visit(fixture, { path: `/n/${i}` });
      assert.equal(result.status, 200);
      assert.equal(result.body.toString(), 'ok');
    }
    assert.equal(origin.connections.length, 1);
    assert.deepEqual(
      fixture.logs.map((log) => [log.method, log.path, log.status]),
      [0, 1, 2, 3, 4].map((i) => ['GET', `/n/${i}`, 200]),
    );
  });

  it('opens a connection per concurrent request and reuses them afterwards', async () => {
    const held: http.ServerResponse[] = [];
    const { origin, fixture } = await setup(
      await httpOrigin((_req, res) => {
        // Answer only once all three are in, so none can free a connection for another.
        held.push(res);
        if (held.length === 3) for (const r of held.splice(0)) r.end('ok');
      }),
    );
    for (let round = 0; round < 2; round++) {
      const results = await Promise.all([visit(fixture), visit(fixture), visit(fixture)]);
      assert.deepEqual(
        results.map((r) => r.status),
        [200, 200, 200],
      );
    }
    assert.equal(origin.connections.length, 3);
  });

  it('sends the next request on a working connection when the origin closed the idle one', async () => {
    const { origin, fixture } = await setup(await httpOrigin(ok));
    assert.equal((await visit(fixture)).status, 200);
    origin.connections[0]!.destroy();
    const result = await visit(fixture);
    assert.equal(result.status, 200);
    assert.equal(result.body.toString(), 'ok');
    assert.equal(origin.connections.length, 2);
  });

  it('retries a request without a body once when a reused connection dies before answering', async () => {
    const { origin, fixture } = await setup(
      await rawOrigin((socket, _head, index, connection) => {
        // The first connection answers once, then plays a server that closed it as we sent.
        if (connection === 0 && index === 1) return socket.destroy();
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n${connection}`);
      }),
    );
    assert.equal((await visit(fixture)).body.toString(), '0');
    const result = await visit(fixture);
    assert.equal(result.status, 200);
    assert.equal(result.body.toString(), '1');
    assert.equal(origin.connections.length, 2);
    assert.deepEqual(
      fixture.logs.map((log) => log.status),
      [200, 200],
    );
  });

  it('fails a request with a body on a stale connection instead of retrying it', async () => {
    const { origin, fixture } = await setup(
      await rawOrigin((socket, _head, index) => {
        if (index === 1) return socket.destroy();
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
      }),
    );
    assert.equal((await visit(fixture)).status, 200);
    const result = await visit(fixture, { method: 'POST', headers: ['Content-Length', '3'], body: Buffer.from('abc') });
    assert.equal(result.resetCode, ResetCode.UPSTREAM_ERROR);
    assert.equal(origin.connections.length, 1);
    assert.equal(fixture.logs[1]?.status, 502);
  });

  it('does not reuse a connection answered with Connection: close', async () => {
    const { origin, fixture } = await setup(
      await httpOrigin((_req, res) => {
        res.setHeader('Connection', 'close');
        res.end('bye');
      }),
    );
    for (let i = 0; i < 2; i++) assert.equal((await visit(fixture)).body.toString(), 'bye');
    assert.equal(origin.connections.length, 2);
  });

  it('reads a body delimited by the end of the connection, then opens a new one', async () => {
    const { origin, fixture } = await setup(
      await rawOrigin((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end')),
    );
    for (let i = 0; i < 2; i++) {
      const result = await visit(fixture);
      assert.equal(result.resetCode, undefined);
      assert.equal(result.body.toString(), 'until the end');
    }
    assert.equal(origin.connections.length, 2);
  });

  it('does not reuse a connection that sent bytes after the response', async () => {
    const { origin, fixture } = await setup(
      await rawOrigin((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n')),
    );
    for (let i = 0; i < 2; i++) assert.equal((await visit(fixture)).body.toString(), 'ok');
    assert.equal(origin.connections.length, 2);
  });

  it('reuses the connection after HEAD responses that announce a length', async () => {
    const { origin, fixture } = await setup(await httpOrigin((_req, res) => res.setHeader('Content-Length', 1000).end()));
    for (let i = 0; i < 2; i++) {
      const result = await visit(fixture, { method: 'HEAD' });
      assert.equal(result.status, 200);
      assert.equal(result.body.length, 0);
    }
    assert.equal(origin.connections.length, 1);
  });

  it('resets with UPSTREAM_ERROR when the origin dies in the middle of the body', async () => {
    const { fixture } = await setup(
      await rawOrigin((socket) => {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b');
        setImmediate(() => socket.destroy());
      }),
    );
    const result = await visit(fixture);
    assert.equal(result.status, 200, 'the head went out before the failure');
    assert.equal(result.resetCode, ResetCode.UPSTREAM_ERROR);
    assert.equal((await fixture.nextLog()).status, 200);
  });

  it('resets with UPSTREAM_REFUSED and logs 502 when nothing listens on the port', async () => {
    const port = await closedPort();
    // Nothing listens: an "origin" with nothing to close.
    const { fixture } = await setup({ url: `http://127.0.0.1:${port}`, port, connections: [], close: async () => undefined });
    const result = await visit(fixture);
    assert.equal(result.resetCode, ResetCode.UPSTREAM_REFUSED);
    assert.equal((await fixture.nextLog()).status, 502);
  });

  it('resets with UPSTREAM_ERROR and logs 502 when the origin answers something not HTTP', async () => {
    const { fixture } = await setup(await rawOrigin((socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n\r\n')));
    const result = await visit(fixture);
    assert.equal(result.resetCode, ResetCode.UPSTREAM_ERROR);
    assert.equal((await fixture.nextLog()).status, 502);
  });

  it('forwards the response head before any body byte exists', async () => {
    let finish: (() => void) | undefined;
    const { fixture } = await setup(
      await httpOrigin((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        res.flushHeaders();
        finish = () => res.end();
      }),
    );
    const stream = openRequest(fixture.edge);
    const [head] = (await once(stream, 'headers')) as [ResponseHead];
    assert.equal(head.s, 200);
    assert.ok(head.h.includes('text/event-stream'));
    finish!();
    stream.resume();
    await once(stream, 'end');
  });

  it('speaks TLS to an https origin without checking its certificate, and reuses the connection', async (t) => {
    const credentials = await selfSignedCertificate();
    if (!credentials) {
      // Skipping for a missing package is for laptops; CI installs openssl and must not skip.
      assert.notEqual(process.env.CI, 'true', 'openssl is required under CI=true');
      return t.skip('openssl is not installed');
    }
    const { origin, fixture } = await setup(await httpsOrigin(credentials, ok));
    for (let i = 0; i < 2; i++) assert.equal((await visit(fixture)).body.toString(), 'ok');
    assert.equal(origin.connections.length, 1);
  });

  it('closes a connection left idle for IDLE_TIMEOUT_MS', async () => {
    const { origin, fixture } = await setup(await httpOrigin(ok));
    await visit(fixture);
    const started = performance.now();
    await once(origin.connections[0]!, 'close');
    assert.ok(performance.now() - started >= IDLE_TIMEOUT_MS - 100, 'not before its time');
  });

  it('destroys its connections on close()', async () => {
    const { origin, fixture } = await setup(await httpOrigin(ok));
    await visit(fixture);
    const closed = once(origin.connections[0]!, 'close');
    await fixture.proxy.close();
    await closed;
  });
});
