import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startAgent, startOrigin, tunnelSuite, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { h2Request, h2Session } from './harness/h2-visitor.js';
import { rawExchange } from './harness/raw-exchange.js';

/** Bounds a hung test (a connection the edge never answers); not a timing assertion. */
const HANG = { timeout: 30_000 };

// One routing rule for every visitor protocol: the absolute-form target's authority, else
// :authority, else the single Host. Two tunnels of two accounts, A and B, each with its own
// origin, show which one a request reached.

describe('which host a request is routed by', () => {
  let server: TestServer;
  let originA: TestOrigin;
  let agentA: TestAgent;
  let originB: TestOrigin;
  let agentB: TestAgent;
  let hostA: string;
  let hostB: string;
  const tunnel = tunnelSuite();
  before(async () => {
    ({ server, origin: originA, agent: agentA } = tunnel);
    originB = await startOrigin();
    agentB = await startAgent(server, { token: await server.createAccount('b@example.com', 'pro'), target: originB.port });
    hostA = `${agentA.hostname}:${server.httpPort}`;
    hostB = `${agentB.hostname}:${server.httpPort}`;
  });
  after(async () => {
    await agentB?.close();
    await originB?.close();
  });

  /** Requests seen by each origin since `since`. */
  function seenSince(since: { a: number; b: number }): { a: number; b: number } {
    return { a: originA.seen.length - since.a, b: originB.seen.length - since.b };
  }
  const mark = (): { a: number; b: number } => ({ a: originA.seen.length, b: originB.seen.length });

  it('routes an absolute-form target by its authority, not by Host, and forwards that authority as Host', HANG, async () => {
    const since = mark();
    const result = await rawExchange(server.httpPort, `GET http://${hostB}/echo HTTP/1.1\r\nHost: ${hostA}\r\nConnection: close\r\n\r\n`);
    assert.deepEqual(result.statuses, [200]);
    assert.deepEqual(seenSince(since), { a: 0, b: 1 });
    const seen = originB.seen.at(-1)!;
    assert.equal(seen.url, '/echo');
    assert.equal(seen.headers.host, hostB);
    assert.equal(seen.headers['x-forwarded-host'], hostB);
  });

  it('routes an absolute-form upgrade by its authority', HANG, async () => {
    const accepted = { a: 0, b: 0 };
    const countA = (): number => accepted.a++;
    const countB = (): number => accepted.b++;
    originA.activity.on('websocket', countA);
    originB.activity.on('websocket', countB);
    const socket = net.connect({ host: '127.0.0.1', port: server.httpPort });
    try {
      socket.write(
        `GET http://${hostB}/ws HTTP/1.1\r\nHost: ${hostA}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      assert.match(chunk.toString('latin1'), /^HTTP\/1\.1 101 /);
      // The origin accepts the WebSocket before its 101 leaves, so the count is settled here.
      assert.deepEqual(accepted, { a: 0, b: 1 });
    } finally {
      socket.destroy();
      originA.activity.off('websocket', countA);
      originB.activity.off('websocket', countB);
    }
  });

  const duplicates = [
    ['a body-less GET (the lean path hands it over)', 'GET /echo HTTP/1.1\r\n', ''],
    ['a POST with a body', 'POST /echo HTTP/1.1\r\nContent-Length: 1\r\n', 'x'],
    ['an upgrade', 'GET /echo HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: probe\r\n', ''],
  ] as const;
  for (const [name, start, body] of duplicates) {
    it(`answers 400 to ${name} with two Host headers`, HANG, async () => {
      const since = mark();
      const result = await rawExchange(server.httpPort, `${start}Host: ${hostA}\r\nHost: ${hostB}\r\nConnection: close\r\n\r\n${body}`);
      assert.deepEqual(result.statuses, [400]);
      assert.match(result.text, /exactly one Host header/);
      assert.deepEqual(seenSince(since), { a: 0, b: 0 });
    });
  }

  it('answers 400 to an HTTP/2 request whose host header disagrees with :authority', HANG, async () => {
    const since = mark();
    const session = h2Session(server, agentA.hostname);
    try {
      const result = await h2Request(session, { ':path': '/echo', ':authority': hostA, host: hostB });
      assert.equal(result.status, 400);
      assert.deepEqual(seenSince(since), { a: 0, b: 0 });
    } finally {
      session.close();
    }
  });

  it('routes an HTTP/2 request by :authority, with a host header that agrees', HANG, async () => {
    const since = mark();
    const session = h2Session(server, agentA.hostname);
    try {
      const result = await h2Request(session, { ':path': '/echo', ':authority': hostA, host: hostA.toUpperCase() });
      assert.equal(result.status, 200);
      assert.deepEqual(seenSince(since), { a: 1, b: 0 });
      assert.equal(String(originA.seen.at(-1)!.headers['x-forwarded-host']).toLowerCase(), hostA);
    } finally {
      session.close();
    }
  });
});
