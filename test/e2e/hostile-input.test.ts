import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { tunnelSuite, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { h2Request, h2Session } from './harness/h2-visitor.js';
import { rawExchange } from './harness/raw-exchange.js';

/** Bounds a hung test (a connection the edge never answers); not a timing assertion. */
const HANG = { timeout: 30_000 };

describe('hostile input at the edge', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  let host: string;
  const tunnel = tunnelSuite();
  before(() => {
    ({ server, origin, agent } = tunnel);
    host = `${agent.hostname}:${server.httpPort}`;
  });

  /** The edge process is alive and the tunnel still serves. */
  async function assertStillServing(): Promise<void> {
    assert.equal(server.proc.child.exitCode, null);
    const result = await visit(server, agent.hostname, '/echo');
    assert.equal(result.status, 200);
  }

  it('answers 431 to a request head over 32 KiB and keeps serving', HANG, async () => {
    const big = 'a'.repeat(40 * 1024);
    const result = await rawExchange(server.httpPort, `GET /echo HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${big}\r\n\r\n`);
    assert.deepEqual(result.statuses, [431]);
    assert.ok(!origin.seen.some((request) => request.headers['x-big'] !== undefined), 'the oversized head reached the origin');
    await assertStillServing();
  });

  it('answers 431 to many headers adding up to over 32 KiB and keeps serving', HANG, async () => {
    const headers = Array.from({ length: 700 }, (_, index) => `X-H${index}: ${'b'.repeat(50)}\r\n`).join('');
    const result = await rawExchange(server.httpPort, `GET /echo HTTP/1.1\r\nHost: ${host}\r\n${headers}\r\n`);
    assert.deepEqual(result.statuses, [431]);
    await assertStillServing();
  });

  const h2Heads = [
    ['one 40 KiB header', { 'x-big': 'a'.repeat(40 * 1024) }],
    // nghttp2 refuses any single field above 64 KiB outright (a compression error), so 100 KiB comes in four.
    ['four 25 KiB headers', Object.fromEntries([0, 1, 2, 3].map((index) => [`x-h${index}`, 'c'.repeat(25 * 1024)]))],
    [
      '700 headers adding up to over 32 KiB',
      Object.fromEntries(Array.from({ length: 700 }, (_, index) => [`x-h${index}`, 'b'.repeat(50)])),
    ],
  ] as const;
  for (const [name, headers] of h2Heads) {
    it(`answers 431 to an HTTP/2 request head over 32 KiB (${name}), as HTTP/1.1 does, and keeps serving`, HANG, async () => {
      const session = h2Session(server, agent.hostname);
      try {
        const result = await h2Request(session, { ':path': '/echo', ':authority': host, ...headers });
        assert.equal(result.status, 431);
        // The edge's own answer: the origin (Node, 16 KiB heads) would answer 431 too, had it been sent on.
        assert.equal(result.headers['x-svc-error'], 'Request Header Fields Too Large');
        assert.ok(!origin.seen.some((request) => request.headers['x-big'] !== undefined || request.headers['x-h0'] !== undefined));
        // The session survives the refusal, like an HTTP/1.1 connection would not need to.
        assert.equal((await h2Request(session, { ':path': '/echo', ':authority': host })).status, 200);
      } finally {
        session.close();
      }
      await assertStillServing();
    });
  }

  it('forwards an HTTP/2 request head just under 32 KiB', HANG, async () => {
    const session = h2Session(server, agent.hostname);
    try {
      const result = await h2Request(session, { ':path': '/echo', ':authority': host, 'x-big': 'a'.repeat(30 * 1024) });
      // The origin (Node, 16 KiB heads) refuses it itself: the edge passed it on.
      assert.equal(result.status, 431);
      assert.equal(result.headers['x-svc-error'], undefined, 'the edge answered, not the origin');
    } finally {
      session.close();
    }
  });

  const smuggling = [
    {
      name: 'Content-Length and Transfer-Encoding together (CL.TE)',
      head: (body: string) => `Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n`,
      body: '0\r\n\r\n',
    },
    {
      name: 'Transfer-Encoding before Content-Length (TE.CL)',
      head: () => 'Transfer-Encoding: chunked\r\nContent-Length: 4\r\n',
      body: '0\r\n\r\n',
    },
    {
      name: 'an obfuscated Transfer-Encoding with a Content-Length',
      head: (body: string) => `Content-Length: ${body.length}\r\nTransfer-Encoding: xchunked\r\n`,
      body: '0\r\n\r\n',
    },
    {
      name: 'two different Content-Length headers',
      head: () => 'Content-Length: 5\r\nContent-Length: 60\r\n',
      body: '0\r\n\r\n',
    },
  ];
  for (const attempt of smuggling) {
    it(`rejects ${attempt.name} with 400 and never serves the smuggled request`, HANG, async () => {
      const smuggled = `GET /smuggled HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
      const body = `${attempt.body}${smuggled}`;
      const result = await rawExchange(server.httpPort, `POST /echo HTTP/1.1\r\nHost: ${host}\r\n${attempt.head(body)}\r\n${body}`);
      assert.deepEqual(result.statuses, [400]);
      assert.ok(!origin.seen.some((request) => request.url === '/smuggled'), 'the smuggled request reached the origin');
      await assertStillServing();
    });
  }

  it('answers 400 to an HTTP/2 path with bytes outside printable ASCII, as HTTP/1.1 does, and keeps serving', HANG, async () => {
    const raw = await rawExchange(server.httpPort, `GET /caf\u00e9 HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    assert.deepEqual(raw.statuses, [400]);
    const session = h2Session(server, agent.hostname);
    try {
      for (const path of ['/caf\u00e9', '/\u0085x', '/a?q=\u00ff']) {
        const result = await h2Request(session, { ':path': path, ':authority': host });
        assert.equal(result.status, 400, path);
        assert.equal(result.headers['x-svc-error'], 'Bad Request');
      }
      assert.ok(!origin.seen.some((request) => /[^\x21-\x7e]/.test(request.url)), 'a raw byte reached the origin');
      // Percent-encoded, as browsers send it, the same path passes.
      assert.equal((await h2Request(session, { ':path': '/echo?q=caf%C3%A9', ':authority': host })).status, 200);
    } finally {
      session.close();
    }
    await assertStillServing();
  });

  it('answers 400 to an HTTP/1.1 request without Host', HANG, async () => {
    const result = await rawExchange(server.httpPort, 'GET /echo HTTP/1.1\r\nConnection: close\r\n\r\n');
    assert.deepEqual(result.statuses, [400]);
    await assertStillServing();
  });

  it('answers 400 to an HTTP/1.0 request without Host', HANG, async () => {
    const result = await rawExchange(server.httpPort, 'GET /echo HTTP/1.0\r\n\r\n');
    assert.deepEqual(result.statuses, [400]);
    await assertStillServing();
  });

  it('answers 400 to a WebSocket upgrade without Host', HANG, async () => {
    const result = await rawExchange(
      server.httpPort,
      'GET /ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
    assert.deepEqual(result.statuses, [400]);
    await assertStillServing();
  });

  it('answers 405 to CONNECT, never opening a connection to the host it names, and keeps serving', HANG, async () => {
    const result = await rawExchange(server.httpPort, `CONNECT example.com:443 HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    assert.deepEqual(result.statuses, [405]);
    assert.match(result.text, /CONNECT is not supported/);
    assert.match(result.text, /\r\nallow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n/);
    assert.match(result.text, /\r\nconnection: close\r\n/);
    assert.ok(!origin.seen.some((request) => request.method === 'CONNECT'), 'the CONNECT reached the origin');
    await assertStillServing();
  });

  it('answers 405 with Allow to an HTTP/2 CONNECT, as on HTTP/1.1, and keeps serving', HANG, async () => {
    const session = h2Session(server, agent.hostname);
    try {
      const result = await h2Request(session, { ':method': 'CONNECT', ':authority': 'example.com:443' });
      assert.equal(result.status, 405);
      assert.equal(result.headers['allow'], 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
      assert.equal(result.headers['x-svc-error'], 'Method Not Allowed');
      assert.match(result.text, /CONNECT is not supported/);
      // The session serves on: a request on it still reaches the tunnel.
      const after = await h2Request(session, { ':path': '/echo', ':authority': host });
      assert.equal(after.status, 200);
    } finally {
      session.close();
    }
    assert.ok(!origin.seen.some((request) => request.method === 'CONNECT'), 'the CONNECT reached the origin');
    await assertStillServing();
  });
});
