import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { before, describe, it } from 'node:test';
import { loopbackLookup, tunnelSuite, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';

/** Bounds a hung test (a response the edge never completes); not a timing assertion. */
const HANG = { timeout: 30_000 };

/**
 * One visitor connection speaking raw HTTP/1.1: `send` writes bytes, `responses(n)` parses the
 * first n complete responses (Content-Length or chunked bodies) from everything received.
 */
function rawVisitor(socket: net.Socket | tls.TLSSocket) {
  let received = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
  return {
    socket,
    send: (text: string) => socket.write(text),
    async responses(count: number): Promise<Array<{ status: number; head: string; body: string }>> {
      for (;;) {
        const parsed = parseResponses(received);
        if (parsed.length >= count) return parsed.slice(0, count);
        if (socket.destroyed) throw new Error(`connection closed after ${parsed.length} responses: ${received.toString('latin1')}`);
        await Promise.race([once(socket, 'data'), once(socket, 'close')]);
      }
    },
  };
}

function parseResponses(bytes: Buffer): Array<{ status: number; head: string; body: string }> {
  const out: Array<{ status: number; head: string; body: string }> = [];
  let offset = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', offset);
    if (end < 0) return out;
    const head = bytes.toString('latin1', offset, end);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    let cursor = end + 4;
    let body = '';
    if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      for (;;) {
        const line = bytes.indexOf('\r\n', cursor);
        if (line < 0) return out;
        const size = parseInt(bytes.toString('latin1', cursor, line), 16);
        if (bytes.length < line + 2 + size + 2) return out;
        body += bytes.toString('utf8', line + 2, line + 2 + size);
        cursor = line + 2 + size + 2;
        if (size === 0) break;
      }
    } else if (length && !head.startsWith('HEAD')) {
      const size = Number(length[1]);
      if (bytes.length < cursor + size) return out;
      body = bytes.toString('utf8', cursor, cursor + size);
      cursor += size;
    }
    out.push({ status, head, body });
    offset = cursor;
  }
}

describe('the lean HTTP/1.1 path and its hand-over to Node', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  let host: string;
  const tunnel = tunnelSuite();
  before(() => {
    ({ server, origin, agent } = tunnel);
    host = `${agent.hostname}:${server.httpPort}`;
  });

  function connect(): ReturnType<typeof rawVisitor> {
    return rawVisitor(net.connect({ host: '127.0.0.1', port: server.httpPort }));
  }

  it('answers pipelined GETs on one connection in order', HANG, async () => {
    const visitor = connect();
    visitor.send(['/echo?n=1', '/status/201', '/echo?n=3'].map((path) => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`).join(''));
    const [one, two, three] = await visitor.responses(3);
    assert.equal(JSON.parse(one!.body).url, '/echo?n=1');
    assert.equal(two!.status, 201);
    assert.equal(two!.body, 'status 201', 'a chunked origin body arrives whole');
    assert.equal(JSON.parse(three!.body).url, '/echo?n=3');
    visitor.socket.destroy();
  });

  it('serves GET, then a POST with a body (Node), then a GET on the same keep-alive connection', HANG, async () => {
    const visitor = connect();
    visitor.send(`GET /echo?step=1 HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const [first] = await visitor.responses(1);
    assert.equal(JSON.parse(first!.body).url, '/echo?step=1');
    visitor.send(`POST /echo?step=2 HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 11\r\n\r\nhello world`);
    visitor.send(`GET /echo?step=3 HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const [, second, third] = await visitor.responses(3);
    const echoed = JSON.parse(second!.body) as { method: string; bodyLength: number };
    assert.deepEqual([echoed.method, echoed.bodyLength], ['POST', 11]);
    assert.equal(JSON.parse(third!.body).url, '/echo?step=3');
    visitor.socket.destroy();
  });

  it('refuses a method Node refuses (a lower-case one) with 400, as the Node path does', HANG, async () => {
    for (const line of ['get /echo HTTP/1.1', 'FOO /echo HTTP/1.1']) {
      const visitor = connect();
      visitor.send(`${line}\r\nHost: ${host}\r\n\r\n`);
      const [response] = await visitor.responses(1);
      assert.equal(response!.status, 400, line);
      visitor.socket.destroy();
    }
  });

  it('answers HEAD with the head alone and keeps the connection usable', HANG, async () => {
    const visitor = connect();
    visitor.send(`HEAD /echo HTTP/1.1\r\nHost: ${host}\r\n\r\nGET /status/200 HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const [head, get] = await visitor.responses(2);
    assert.equal(head!.status, 200);
    assert.equal(get!.body, 'status 200');
    visitor.socket.destroy();
  });

  it('closes after the answer when the visitor says Connection: close, and says so', HANG, async () => {
    const visitor = connect();
    visitor.send(`GET /status/200 HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    const [response] = await visitor.responses(1);
    assert.match(response!.head, /\r\nconnection: close/i);
    if (!visitor.socket.destroyed) await once(visitor.socket, 'close');
  });

  it(
    'treats a visitor that half-closes with a request in flight as gone, as Node does: the origin request is cancelled',
    HANG,
    async () => {
      const visitor = connect();
      visitor.socket.end(`GET /hang HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      await once(visitor.socket, 'close');
      if (origin.activity.inFlight > 0) await once(origin.activity, 'idle');
      assert.equal(origin.activity.inFlight, 0);
    },
  );

  it('answers an unknown name with the offline page, and a bodiless request over TLS lean too', HANG, async () => {
    const visitor = connect();
    visitor.send(`GET / HTTP/1.1\r\nHost: nobody-here.localhost\r\n\r\nGET /status/202 HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const [offline, after] = await visitor.responses(2);
    assert.equal(offline!.status, 404);
    assert.equal(after!.status, 202, 'the connection stays usable after the page');
    visitor.socket.destroy();

    const secure = rawVisitor(
      tls.connect({ host: '127.0.0.1', port: server.httpsPort, servername: agent.hostname, ca: server.caPem, ALPNProtocols: ['http/1.1'] }),
    );
    secure.send(`GET /echo?tls=1 HTTP/1.1\r\nHost: ${agent.hostname}\r\n\r\n`);
    const [echo] = await secure.responses(1);
    assert.equal((JSON.parse(echo!.body) as { headers: Record<string, string> }).headers['x-forwarded-proto'], 'https');
    secure.socket.destroy();
  });

  it('a visitor leaving mid-download stops the origin', HANG, async () => {
    const request = http.get({
      host: agent.hostname,
      port: server.httpPort,
      path: '/pattern?n=1073741824',
      lookup: loopbackLookup,
      agent: false,
    });
    const [response] = (await once(request, 'response')) as [http.IncomingMessage];
    await once(response, 'data');
    const idle = once(origin.activity, 'idle');
    request.destroy();
    await idle;
    assert.ok(origin.activity.sent < 1073741824, 'the origin stopped before sending it all');
  });

  it('an origin response without a length reaches an HTTP client intact', HANG, async () => {
    const result = await visit(server, agent.hostname, '/');
    assert.equal(result.status, 200);
    assert.equal(result.headers['transfer-encoding'], 'chunked');
    assert.equal(result.text, 'hello from origin');
  });
});
