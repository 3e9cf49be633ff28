import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { tunnelSuite, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { rawExchange } from './raw-exchange.js';

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
});
