import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { before, describe, it } from 'node:test';
import { edgeUrl, loopbackLookup, tunnelSuite, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { MiB, cpuMs, openStreams } from './harness/data-path-support.js';

const REQUESTS = 10_000;
const CONCURRENCY = 200;
/** Bounds a hung storm (a leaked stream or a stuck session hangs); not a timing assertion. */
const HANG = { timeout: 180_000 };

/** The ways a visitor walks away mid-request; the storm cycles through them. */
type Abort = (url: string) => Promise<number | undefined>;

/** Waits for the response head, then drops the connection. Resolves with the status. */
const afterHead =
  (path: string): Abort =>
  (url) =>
    new Promise((resolve, reject) => {
      const req = http.request(`${url}${path}`, { lookup: loopbackLookup, agent: false });
      req.once('response', (res) => {
        req.destroy();
        resolve(res.statusCode);
      });
      req.once('error', reject);
      req.end();
    });
/** A response whose body never comes. */
const afterIdleHead = afterHead('/hang?head=1');
/** A download whose bytes are on their way through the session when the visitor leaves. */
const afterBulkHead = afterHead(`/pattern?n=${64 * MiB}`);

/** Sends a request the origin never answers and drops the connection as soon as it is written. */
const afterSend: Abort = (url) =>
  new Promise((resolve) => {
    const req = http.request(`${url}/hang`, { lookup: loopbackLookup, agent: false });
    req.on('error', () => undefined);
    req.once('finish', () => req.destroy());
    req.once('close', () => resolve(undefined));
    req.end();
  });

/** Starts a 1 MiB upload and drops the connection after its first 64 KiB. */
const midUpload: Abort = (url) =>
  new Promise((resolve) => {
    const req = http.request(`${url}/upload`, {
      method: 'POST',
      headers: { 'content-length': String(MiB) },
      lookup: loopbackLookup,
      agent: false,
    });
    req.on('error', () => undefined);
    req.once('close', () => resolve(undefined));
    req.write(Buffer.alloc(64 * 1024, 7), () => req.destroy());
  });

describe('a storm of aborted visitor requests', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  const tunnel = tunnelSuite();
  before(() => {
    ({ server, origin, agent } = tunnel);
  });

  it('leaves the session serving, the agent connected, and no stream or origin request open', HANG, async (t) => {
    const url = edgeUrl(server, agent.hostname).replace(/\/$/, '');
    // One in ten leaves mid-download (the costly kind: data in flight); the rest split evenly.
    const kindOf = (index: number): Abort => (index % 10 === 9 ? afterBulkHead : [afterIdleHead, afterSend, midUpload][index % 3]!);
    const heads = new Map<number | undefined, number>();
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < REQUESTS) {
          const kind = kindOf(next++);
          const status = await kind(url);
          if (kind === afterIdleHead || kind === afterBulkHead) heads.set(status, (heads.get(status) ?? 0) + 1);
        }
      }),
    );
    t.diagnostic(`${REQUESTS} aborted requests in ${Math.round(performance.now() - started)} ms`);
    const self = process.cpuUsage();
    t.diagnostic(
      `CPU ms: edge ${cpuMs(server.proc.child.pid!)}, agent ${cpuMs(agent.proc.child.pid!)}, test process ${Math.round((self.user + self.system) / 1000)}`,
    );
    // Every download that got a head got the origin's, not an edge error page.
    assert.deepEqual([...heads.keys()], [200]);

    // The same tunnel still serves.
    const normal = await visit(server, agent.hostname, '/echo');
    assert.equal(normal.status, 200);
    // The agent cancelled every origin request it had started.
    if (origin.activity.inFlight > 0) await once(origin.activity, 'idle');
    assert.equal(origin.activity.inFlight, 0);
    // The session survived: the agent runs and never had to reconnect.
    assert.equal(agent.proc.child.exitCode, null);
    assert.deepEqual(
      agent.proc.output.split('\n').filter((line) => /reconnect|connection to the edge lost/i.test(line)),
      [],
    );

    // Every visitor connection closed before the request above was sent, and the edge handles a
    // close at once (it resets the stream), so by now the edge holds no stream of the storm.
    assert.equal(await openStreams(server), 0);
  });
});
