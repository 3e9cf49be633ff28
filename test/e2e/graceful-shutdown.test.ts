import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { api, startAgent, startServer, visit, type TestServer } from './harness/index.js';

// SIGTERM on svc-server: the listeners refuse new connections, agents hear the node is leaving,
// the request in flight completes, usage and inspector are flushed once, the process exits 0,
// and the agent is back as soon as a server answers on the same port and data again.

const SLOW_BODY = 'slow answer, finished during the drain';

/** An origin whose `/slow` answers only when `release()` is called. */
async function startSlowOrigin(): Promise<{ port: number; arrived: Promise<void>; release(): void; close(): Promise<void> }> {
  let arrive!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = http.createServer((req, res) => {
    if (req.url !== '/slow') return void res.end('hello');
    arrive();
    void released.then(() => res.end(SLOW_BODY));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    arrived,
    release,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Resolves with the error code of a TCP dial to `port` (undefined when it connected). */
function dialOutcome(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
  });
}

describe('graceful shutdown on SIGTERM', () => {
  let origin: Awaited<ReturnType<typeof startSlowOrigin>>;
  const cleanups: Array<() => Promise<unknown>> = [];
  before(async () => {
    origin = await startSlowOrigin();
  });
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await origin?.close();
  });

  it('finishes the request in flight, refuses new connections, exits 0, and the agent comes back to the next server', async () => {
    const env = { SVC_DRAIN_MS: '30000', SVC_NAME_GRACE_MS: '30000' };
    const first = await startServer({ env });
    cleanups.push(() => first.close({ keepData: true }));
    const agent = await startAgent(first, { token: first.token, target: origin.port });
    cleanups.push(() => agent.proc.kill('SIGKILL'));

    const inFlight = visit(first, agent.hostname, '/slow');
    await origin.arrived;
    first.proc.child.kill('SIGTERM');
    await first.proc.waitForLine(/new connections refused/);
    assert.equal(await dialOutcome(first.httpPort), 'ECONNREFUSED');
    assert.equal(await dialOutcome(first.httpsPort), 'ECONNREFUSED');

    origin.release();
    const answer = await inFlight;
    assert.deepEqual([answer.status, answer.text], [200, SLOW_BODY]);
    await agent.proc.waitForLine(/^Edge restarting \(the edge is restarting\); reconnecting…$/);
    assert.deepEqual(await first.proc.exited, { code: 0, signal: null }, first.proc.output);
    assert.match(first.proc.output, /requests in flight finished/);

    const second: TestServer = await startServer({ dataDir: first.dataDir, httpPort: first.httpPort, httpsPort: first.httpsPort, env });
    cleanups.push(() => second.close());
    await agent.proc.waitForLine(/^Reconnected: forwarding /);
    assert.doesNotMatch(agent.proc.output, /Connection to the edge lost/);

    // Flushed before the exit, exactly once: the record and the day's count survive the restart.
    const records = (await api(second, 'GET', '/v1/requests?limit=1000', { token: first.token })).body as {
      requests: Array<{ path: string; status: number }>;
    };
    assert.deepEqual(
      records.requests.filter((r) => r.path === '/slow').map((r) => r.status),
      [200],
    );
    const history = (await api(second, 'GET', '/v1/usage/history', { token: first.token })).body as {
      days: Array<{ requests: number; bandwidthBytes: number }>;
    };
    assert.equal(history.days.length, 1);
    assert.equal(history.days[0]!.requests, 1, JSON.stringify(history));
    assert.ok(history.days[0]!.bandwidthBytes >= SLOW_BODY.length, JSON.stringify(history));
    assert.equal((await visit(second, agent.hostname, '/')).text, 'hello');
    assert.equal((await agent.close()).code, 0);
  });
});
