import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { sendBody } from '@svcrouter/testkit';
import Database from 'better-sqlite3';
import { api, edgeUrl, loopbackLookup, startAgent, startServer, tempDir, type TestAgent, type TestServer } from './harness/index.js';

// Upload metering across repeated crashes: a real server meters visitors' request bodies, is
// SIGKILLed under that load three times and restarted on the same store file and ports, and
// the agent comes back by itself each time. Request bodies are counted by the edge as it reads
// them, so the stored total may never exceed what visitors' sockets accepted, after any kill;
// each restart must replay nothing and leave the file intact. (metering-crash.test.ts holds the
// download direction and the lower bound of one kill.)

const FLUSH_MS = 100;
const UPLOAD_BYTES = 1024 * 1024;
const UPLOADERS = 3;
const KILLS = 3;
const PIECE = Buffer.alloc(64 * 1024, 0x75);

/** POSTs UPLOAD_BYTES with backpressure; `onAccepted` gets each piece the socket took. */
function upload(server: TestServer, hostname: string, onAccepted: (bytes: number) => void): Promise<void> {
  const req = http.request(edgeUrl(server, hostname, '/up'), {
    method: 'POST',
    lookup: loopbackLookup,
    agent: false,
    headers: { 'content-length': String(UPLOAD_BYTES) },
  });
  return sendBody(req, UPLOAD_BYTES, PIECE, onAccepted);
}

/** Resolves when the agent has printed its `count`-th "Reconnected" line. */
function reconnected(agent: TestAgent, count: number): Promise<void> {
  const seen = (): number => agent.proc.lines.filter((line) => line.startsWith('Reconnected: ')).length;
  if (seen() >= count) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onData = (): void => {
      // Proc parses lines on its own 'data' listener, registered first: its lines are current here.
      if (seen() < count) return;
      agent.proc.child.stdout?.off('data', onData);
      resolve();
    };
    agent.proc.child.stdout?.on('data', onData);
    void agent.proc.exited.then(() => reject(new Error(`agent exited before reconnecting:\n${agent.proc.output}`)));
  });
}

describe('upload metering across repeated crashes', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  });

  it('never stores more upload bytes than visitors sent, after each of three SIGKILLs', async (t) => {
    const data = await tempDir('svc-metering-up-');
    cleanups.push(() => data.remove());
    let originReceived = 0;
    const origin = http.createServer((req, res) => {
      req.on('data', (chunk: Buffer) => (originReceived += chunk.length));
      req.on('end', () => res.writeHead(200, { 'content-length': '0' }).end());
      req.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      origin.closeAllConnections();
      await new Promise((resolve) => origin.close(resolve));
    });
    const env = { SVC_USAGE_FLUSH_MS: String(FLUSH_MS) };
    let server = await startServer({ dataDir: data.dir, env });
    const ports = { httpPort: server.httpPort, httpsPort: server.httpsPort };
    cleanups.push(() => server.close({ keepData: true }));
    const token = await server.createAccount('uploads@example.com');
    const agent = await startAgent(server, { token, target: (origin.address() as AddressInfo).port });
    cleanups.push(() => agent.close());
    const file = `${data.dir}/svc.sqlite`;
    const stored = (): number => {
      const db = new Database(file, { fileMustExist: true });
      try {
        return (db.prepare('SELECT COALESCE(SUM(bytes), 0) AS bytes FROM usage_monthly').get() as { bytes: number }).bytes;
      } finally {
        db.close();
      }
    };

    let sent = 0;
    let previous = 0;
    for (let kill = 1; kill <= KILLS; kill++) {
      let running = true;
      const workers = Array.from({ length: UPLOADERS }, async () => {
        while (running) await upload(server, agent.hostname, (bytes) => (sent += bytes));
      });
      // No event says "the server flushed": poll the file until a flush of this round landed.
      const deadline = Date.now() + 60_000;
      while (stored() <= previous) {
        assert.ok(Date.now() < deadline, `round ${kill}: no flush landed within 60 s`);
        await new Promise((resolve) => setTimeout(resolve, FLUSH_MS / 2));
      }
      running = false;
      await server.proc.kill('SIGKILL');
      await Promise.all(workers);
      const db = new Database(file, { fileMustExist: true });
      const integrity = db.pragma('integrity_check', { simple: true });
      db.close();
      const recorded = stored();
      assert.equal(integrity, 'ok', `round ${kill}`);
      assert.ok(recorded > previous, `round ${kill}: nothing of this round was stored`);
      assert.ok(recorded <= sent, `round ${kill}: stored ${recorded} > visitors sent ${sent} (origin received ${originReceived})`);
      t.diagnostic(`kill ${kill}: visitors sent ${sent}, origin received ${originReceived}, stored ${recorded}`);
      previous = recorded;
      server = await startServer({ dataDir: data.dir, env, ...ports });
      await reconnected(agent, kill);
    }

    // The restarted server starts from the file and replays nothing.
    const usage = await api(server, 'GET', '/v1/usage', { token });
    assert.equal((usage.body as { used: { bandwidthBytes: number } }).used.bandwidthBytes, previous);
  });
});
