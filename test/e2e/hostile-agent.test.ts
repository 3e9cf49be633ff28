import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FrameType, encodeFrame, type RequestHead, type StreamDuplex } from '@svcrouter/protocol';
import { openStore } from '@svcrouter/server/store';
import {
  api,
  startAgent,
  startOrigin,
  startServer,
  tempDir,
  visit,
  type TestAgent,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';
import { h2Request, h2Session } from './harness/h2-visitor.js';
import { startHostileAgent, type HostileAgent } from './harness/hostile-agent.js';
import { rawExchange } from './harness/raw-exchange.js';

// An agent that lies in the response heads it sends: whatever it says, the visitor gets a 502
// (never a line the agent wrote itself), and the Traffic Inspector records an integer status,
// for this account and, unharmed, for every other.

/** Response heads no origin could produce, by the path that asks for them. */
const BAD_HEADS: Record<string, unknown> = {
  '/status-object': { s: { a: 1 }, h: [] },
  '/status-injection': { s: '200 OK\r\nInjected: 1\r\nX:', h: [] },
  '/status-text': { s: '200', h: [] },
  '/status-fraction': { s: 200.5, h: [] },
  '/status-high': { s: 600, h: [] },
  '/status-low': { s: 99, h: [] },
  '/header-crlf': { s: 200, h: ['X-A', 'a\r\nInjected: 1'] },
  '/header-nul': { s: 200, h: ['X-A', 'a\0b'] },
  '/header-name': { s: 200, h: ['Bad Name\r\nInjected', '1'] },
  '/headers-numbers': { s: 200, h: [1, 2] },
  '/headers-odd': { s: 200, h: ['X-A'] },
  '/headers-missing': { s: 200 },
};

function answer(stream: StreamDuplex, head: RequestHead): void {
  const bad = BAD_HEADS[head.p];
  stream.resume();
  if (bad === undefined) stream.sendHeaders({ s: 200, h: ['content-length', '2'] });
  else stream.sendHeaders(bad);
  stream.end(bad === undefined ? 'ok' : 'never shown');
}

describe('a hostile agent', () => {
  let data: { dir: string; remove(): Promise<void> };
  let server: TestServer;
  let origin: TestOrigin;
  let hostile: HostileAgent;
  let honest: TestAgent;
  let hostileAccount: string;
  let honestAccount: string;
  let honestVisits = 0;
  let hostileToken: string;

  before(async () => {
    data = await tempDir('svc-hostile-agent-');
    server = await startServer({ dataDir: data.dir });
    origin = await startOrigin();
    hostileToken = await server.createAccount('hostile@example.com', 'pro');
    const idOf = async (token: string) => ((await api(server, 'GET', '/v1/me', { token })).body as { id: string }).id;
    const honestToken = await server.createAccount('honest@example.com', 'pro');
    hostileAccount = await idOf(hostileToken);
    honestAccount = await idOf(honestToken);
    hostile = await startHostileAgent(server.url, hostileToken, answer);
    honest = await startAgent(server, { token: honestToken, target: origin.port });
  });
  after(async () => {
    hostile?.close();
    await honest?.close();
    await origin?.close();
    await server?.close({ keepData: true });
    await data?.remove();
  });

  /** Another account's request in between: it must be served and recorded whatever happened before. */
  async function honestVisit(): Promise<void> {
    assert.equal((await visit(server, honest.hostname, '/echo')).status, 200);
    honestVisits++;
  }

  for (const path of Object.keys(BAD_HEADS)) {
    it(`answers 502 on every visitor protocol to the head ${path}`, async () => {
      const host = `${hostile.hostname}:${server.httpPort}`;
      const lean = await rawExchange(server.httpPort, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      const node = await rawExchange(
        server.httpPort,
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx`,
      );
      const upgrade = await rawExchange(
        server.httpPort,
        `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: probe\r\n\r\n`,
      );
      for (const [name, result] of [
        ['lean', lean],
        ['node', node],
        ['upgrade', upgrade],
      ] as const) {
        assert.deepEqual(result.statuses, [502], `${name}: ${result.text.slice(0, 80)}`);
        assert.ok(!/Injected/i.test(result.text), `${name} carried a line the agent wrote`);
      }
      const session = h2Session(server, hostile.hostname);
      try {
        const h2 = await h2Request(session, { ':path': path, ':authority': hostile.hostname });
        assert.equal(h2.status, 502);
        assert.equal(h2.headers.injected, undefined);
      } finally {
        session.close();
      }
      await honestVisit();
    });
  }

  it('still serves a truthful answer from the same agent', async () => {
    const result = await visit(server, hostile.hostname, '/fine');
    assert.equal(result.status, 200);
    assert.equal(result.text, 'ok');
  });

  it('loses its session when it floods pings and reads none of the echoes', { timeout: 30_000 }, async () => {
    const flooder = await startHostileAgent(server.url, hostileToken, answer);
    // The edge cuts it (a reset, as it destroys a failed session): wait for the close, not an error.
    const closed = new Promise((resolve) => flooder.socket.once('close', resolve));
    flooder.socket.on('error', () => undefined);
    // Stop the session reading, then write raw PING frames of 4 MiB, as a hostile peer would.
    flooder.socket.removeAllListeners('data');
    flooder.socket.pause();
    const ping = encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(4 * 1024 * 1024));
    for (let i = 0; i < 32 && !flooder.socket.destroyed; i++) flooder.socket.write(ping);
    await closed;
    // The edge still serves everyone else.
    assert.equal((await visit(server, honest.hostname, '/echo')).status, 200);
    honestVisits++;
  });

  it('costs no other account its inspector records, and records integer statuses for its own', async () => {
    hostile.close();
    await honest.close();
    await server.close({ keepData: true });
    const store = await openStore({ dataDir: data.dir });
    try {
      const honestRecords = await store.requests.list(honestAccount, { limit: 1000 });
      assert.equal(honestRecords.length, honestVisits);
      const hostileRecords = await store.requests.list(hostileAccount, { limit: 1000 });
      for (const record of hostileRecords) {
        assert.ok(Number.isInteger(record.status), `status ${String(record.status)} for ${record.path}`);
        if (record.path in BAD_HEADS) assert.equal(record.status, 502, record.path);
      }
      // Four visitor protocols per bad head, plus the truthful request.
      assert.equal(hostileRecords.length, Object.keys(BAD_HEADS).length * 4 + 1);
    } finally {
      await store.close();
    }
  });
});
