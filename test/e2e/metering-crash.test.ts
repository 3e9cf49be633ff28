import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { openStore, type Store } from '@svcrouter/server/store';
import { maxInWindow } from '@svcrouter/testkit';
import { utcMonth } from '@svcrouter/server/usage';
import { api, edgeUrl, loopbackLookup, startAgent, startServer, tempDir, type TestAgent, type TestServer } from './harness/index.js';

// Metering survives a crash within its stated bound: a real server meters downloads, is
// SIGKILLed mid-load, and restarts on the same data dir. Bounds checked:
// - upper: the stored total never exceeds what moved (the origin's bytes, and what visitors
//   received plus what one edge may hold per response when killed): nothing counted twice;
// - lower: it is at least what visitors received minus what they received in the worst
//   window of one flush interval + slack (the flush itself, timer lateness under load),
//   plus what drained to them after the kill;
// - after the restart, a known download adds exactly its size: nothing is replayed, and a
//   graceful stop flushes everything.

const FLUSH_MS = 250;
/** On top of the interval: the flush's own duration and timer lateness while proxying. */
const FLUSH_SLACK_MS = 250;
const WORKERS = 4;
const DOWNLOAD_BYTES = 8 * 1024 * 1024;
/** Counted bytes an edge may still hold per response when killed: one mux chunk + the socket's high-water mark. */
const HELD_PER_RESPONSE = 256 * 1024 + 16 * 1024;
/** Distinct stored totals seen before the kill: flushes that happened mid-load. */
const FLUSHES_BEFORE_KILL = 3;

interface CountingOrigin {
  port: number;
  sent(): number;
  close(): Promise<void>;
}

/** `/bytes?n=N` answers N bytes with backpressure and counts every byte it hands to the socket. */
async function startCountingOrigin(): Promise<CountingOrigin> {
  let sent = 0;
  const block = Buffer.alloc(64 * 1024, 0x61);
  const server = http.createServer((req, res) => {
    let left = Number(new URL(req.url ?? '/', 'http://origin').searchParams.get('n') ?? '0');
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(left) });
    const pump = (): void => {
      while (left > 0) {
        const piece = left >= block.length ? block : block.subarray(0, left);
        left -= piece.length;
        sent += piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    sent: () => sent,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Downloads n bytes through the edge; resolves with what arrived, also when cut short. */
function download(server: TestServer, hostname: string, n: number, onBytes: (bytes: number) => void): Promise<number> {
  return new Promise((resolve) => {
    let got = 0;
    const done = (): void => resolve(got);
    const req = http.request(edgeUrl(server, hostname, `/bytes?n=${n}`), { lookup: loopbackLookup, agent: false });
    req.on('response', (res) => {
      res.on('data', (chunk: Buffer) => {
        got += chunk.length;
        onBytes(chunk.length);
      });
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    req.on('error', done);
    req.end();
  });
}

describe('usage metering across a crash', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });

  it('loses at most one flush interval of metering on SIGKILL and never counts twice', async (t) => {
    const data = await tempDir('svc-metering-');
    cleanups.push(() => data.remove());
    const env = { SVC_USAGE_FLUSH_MS: String(FLUSH_MS) };
    const origin = await startCountingOrigin();
    cleanups.push(() => origin.close());
    const server = await startServer({ dataDir: data.dir, env });
    cleanups.push(() => server.close({ keepData: true }));
    const token = await server.createAccount('metered@example.com');
    const agent: TestAgent = await startAgent(server, { token, target: origin.port });
    cleanups.push(() => agent.close());
    const me = await api(server, 'GET', '/v1/me', { token });
    const accountId = (me.body as { id: string }).id;
    const store: Store = await openStore({ dataDir: data.dir });
    cleanups.push(() => store.close());
    const months = new Set<string>([utcMonth(Date.now())]);
    const stored = async (): Promise<number> => {
      months.add(utcMonth(Date.now()));
      let sum = 0;
      for (const month of months) sum += await store.usage.monthBytes(accountId, month);
      return sum;
    };

    // Metered load: WORKERS download loops, each byte's arrival time noted.
    let received = 0;
    let killed = false;
    const timeline: Array<[number, number]> = [];
    const onBytes = (bytes: number): void => {
      received += bytes;
      timeline.push([performance.now(), received]);
    };
    const workers = Array.from({ length: WORKERS }, async () => {
      while (!killed) await download(server, agent.hostname, DOWNLOAD_BYTES, onBytes);
    });

    // No event says "the server flushed": poll the store until several flushes landed mid-load.
    const seen = new Set<number>();
    const deadline = Date.now() + 60_000;
    while (seen.size < FLUSHES_BEFORE_KILL) {
      assert.ok(Date.now() < deadline, `only ${seen.size} flushes landed within 60 s`);
      const total = await stored();
      if (total > 0) seen.add(total);
      await new Promise((resolve) => setTimeout(resolve, FLUSH_MS / 5));
    }
    const atKill = received;
    const killedAt = performance.now();
    killed = true;
    await server.proc.kill('SIGKILL');
    await Promise.all(workers);
    const drained = received - atKill;
    const recorded = await stored();
    const sent = origin.sent();
    const window = maxInWindow(
      timeline.filter(([time]) => time <= killedAt),
      FLUSH_MS + FLUSH_SLACK_MS,
    );
    t.diagnostic(
      `received=${received} originSent=${sent} recorded=${recorded} lost=${received - recorded} ` +
        `bound=${window + drained} (max in ${FLUSH_MS + FLUSH_SLACK_MS} ms window=${window}, drained after kill=${drained})`,
    );
    assert.ok(recorded > 0, 'flushes happened before the kill');
    assert.ok(recorded <= sent, `recorded ${recorded} > origin sent ${sent}`);
    assert.ok(recorded <= received + WORKERS * HELD_PER_RESPONSE, `recorded ${recorded} > received ${received} + in-flight`);
    assert.ok(recorded >= received - window - drained, `lost ${received - recorded} > bound ${window + drained}`);

    // Restart on the same data: nothing is replayed; a known download adds exactly its size.
    await agent.close();
    const restarted = await startServer({ dataDir: data.dir, env });
    cleanups.push(() => restarted.close({ keepData: true }));
    const agent2 = await startAgent(restarted, { token, target: origin.port });
    cleanups.push(() => agent2.close());
    const size = 3 * 1024 * 1024 + 123;
    assert.equal(await download(restarted, agent2.hostname, size, () => undefined), size);
    await agent2.close();
    await restarted.close({ keepData: true });
    assert.equal(await stored(), recorded + size);
  });
});
