import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Messages } from '@svcrouter/protocol';
import { openStore } from '@svcrouter/server/store';
import { utcMonth } from '@svcrouter/server/usage';
import {
  api,
  edgeUrl,
  loopbackLookup,
  spawnAgent,
  splitFailure,
  startAgent,
  startOrigin,
  startServer,
  tempDir,
  visit,
  type TestAgent,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';
import WebSocket from 'ws';

// The monthly transfer quota end to end, with a tiny quota: a transfer in flight is cut once
// it is consumed (overshoot at most 1 MiB), then requests get 429 and new agents are refused.

const MiB = 1024 * 1024;
const QUOTA = 4 * MiB;
/** The stated bound on how far metered bytes may pass the quota. */
const OVERSHOOT = 1 * MiB;

/** Streams `/bytes?n=` through the edge; resolves with the bytes received when the response ends or is cut. */
function download(server: TestServer, hostname: string, n: number): Promise<{ status: number; got: number; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.request(edgeUrl(server, hostname, `/bytes?n=${n}`), { lookup: loopbackLookup, agent: false });
    req.on('response', (res) => {
      let got = 0;
      res.on('data', (chunk: Buffer) => (got += chunk.length));
      res.on('close', () => resolve({ status: res.statusCode ?? 0, got, complete: res.complete }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('monthly transfer quota', () => {
  let data: { dir: string; remove(): Promise<void> };
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  let token: string;

  before(async () => {
    data = await tempDir('svc-quota-');
    server = await startServer({ dataDir: data.dir, env: { SVC_PLANS: JSON.stringify({ free: { bandwidthBytes: QUOTA } }) } });
    origin = await startOrigin();
    token = await server.createAccount('quota@example.com', 'free');
    agent = await startAgent(server, { token, target: origin.port });
  });
  after(async () => {
    await agent?.close();
    await origin?.close();
    await server?.close({ keepData: true });
    await data?.remove();
  });

  it('cuts a download in flight once the quota is consumed, then answers 429 and refuses new agents', async (t) => {
    const me = await api(server, 'GET', '/v1/me', { token });
    const accountId = (me.body as { id: string }).id;
    const month = utcMonth(Date.now());

    const cut = await download(server, agent.hostname, 4 * QUOTA);
    assert.equal(cut.status, 200);
    assert.equal(cut.complete, false, 'the transfer was stopped');
    assert.ok(cut.got <= QUOTA, `visitor got ${cut.got} bytes, more than the quota`);

    const refused = await visit(server, agent.hostname, '/');
    assert.equal(refused.status, 429);
    assert.match(refused.text, new RegExp(Messages.BANDWIDTH_LIMIT));

    const second = spawnAgent(server, { token, target: origin.port });
    const exit = await second.exited;
    assert.equal(exit.code, 1);
    const failure = splitFailure(second.stderrLines.join('\n'));
    assert.equal(failure.sentence, Messages.BANDWIDTH_LIMIT);
    assert.match(failure.hint, /GET \/v1\/usage/);
    assert.doesNotMatch(second.output, /\n\s+at /, 'no stack trace');

    // A graceful stop flushes the meter; the stored total shows the overshoot.
    await agent.close();
    await server.close({ keepData: true });
    const store = await openStore({ dataDir: data.dir });
    try {
      const recorded = await store.usage.monthBytes(accountId, month);
      t.diagnostic(`quota=${QUOTA} visitor got=${cut.got} recorded=${recorded} overshoot=${recorded - QUOTA}`);
      assert.ok(recorded > QUOTA, `recorded ${recorded}: the quota was crossed`);
      assert.ok(recorded <= QUOTA + OVERSHOOT, `recorded ${recorded} overshoots the quota by more than 1 MiB`);
    } finally {
      await store.close();
    }
  });
});

/** used.bandwidthBytes from GET /v1/usage: the meter's live count, flushed or not. */
async function usedBytes(server: TestServer, token: string): Promise<number> {
  const usage = await api(server, 'GET', '/v1/usage', { token });
  assert.equal(usage.status, 200, usage.text);
  return (usage.body as { used: { bandwidthBytes: number } }).used.bandwidthBytes;
}

/** Streams an `n`-byte body to `/upload`; resolves with the status, or 0 when the connection was cut first. */
function upload(server: TestServer, hostname: string, n: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(edgeUrl(server, hostname, '/upload'), { method: 'POST', lookup: loopbackLookup, agent: false });
    req.on('response', (res) => {
      res.resume();
      res.on('close', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    const chunk = Buffer.alloc(64 * 1024, 5);
    let left = n;
    const pump = (): void => {
      while (left > 0 && !req.destroyed) {
        left -= chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('monthly transfer quota on uploads and WebSockets', () => {
  let data: { dir: string; remove(): Promise<void> };
  let server: TestServer;
  let origin: TestOrigin;

  before(async () => {
    data = await tempDir('svc-quota-up-');
    server = await startServer({ dataDir: data.dir, env: { SVC_PLANS: JSON.stringify({ free: { bandwidthBytes: QUOTA } }) } });
    origin = await startOrigin();
  });
  after(async () => {
    await origin?.close();
    await server?.close({ keepData: true });
    await data?.remove();
  });

  it('stops an upload in flight once the quota is consumed', async (t) => {
    const token = await server.createAccount('quota-up@example.com', 'free');
    const agent = await startAgent(server, { token, target: origin.port });
    try {
      const status = await upload(server, agent.hostname, 4 * QUOTA);
      assert.notEqual(status, 200, 'the upload must not complete');
      const used = await usedBytes(server, token);
      t.diagnostic(`quota=${QUOTA} upload status=${status} used=${used} overshoot=${used - QUOTA}`);
      assert.ok(used > QUOTA && used <= QUOTA + OVERSHOOT, `used ${used}`);
    } finally {
      await agent.close();
    }
  });

  it('closes an upgraded connection once the quota is consumed, both directions counted', async (t) => {
    const token = await server.createAccount('quota-ws@example.com', 'free');
    const agent = await startAgent(server, { token, target: origin.port });
    try {
      // Ping-pong 256 KiB messages through the origin's echo until the edge cuts the connection.
      const ws = new WebSocket(edgeUrl(server, agent.hostname, '/ws').replace(/^http/, 'ws'), { lookup: loopbackLookup });
      const closed = once(ws, 'close');
      ws.on('error', () => undefined);
      await once(ws, 'open');
      const payload = Buffer.alloc(256 * 1024, 7);
      let echoed = 0;
      ws.on('message', (message: Buffer) => {
        echoed += message.length;
        if (ws.readyState === WebSocket.OPEN) ws.send(payload);
      });
      ws.send(payload);
      await closed;
      assert.ok(echoed < 2 * QUOTA, `echoed ${echoed} bytes: the connection was not cut`);
      const used = await usedBytes(server, token);
      t.diagnostic(`quota=${QUOTA} echoed=${echoed} used=${used} overshoot=${used - QUOTA}`);
      assert.ok(used > QUOTA && used <= QUOTA + OVERSHOOT, `used ${used}`);
    } finally {
      await agent.close();
    }
  });
});
