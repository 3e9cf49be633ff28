import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { SQLITE_FILE } from '@svcrouter/server/store';
import { startAgent, startOrigin, startServer, tempDir, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { eventually } from './harness/api-helpers.js';
import { inspectorPaths, metric, SqliteLockHolder, VisitorLoop, writeKey } from './harness/store-faults-support.js';

// The SQLite store failing under traffic, with real processes: visitors keep getting 200 from
// the edge, the API answers 503 with Retry-After instead of hanging or 500, the inspector keeps
// its records and writes them once the store is back, and the file passes integrity_check.

const execFileAsync = promisify(execFile);

interface System {
  server: TestServer;
  origin: TestOrigin;
  agent: TestAgent;
}

/** Starts server, origin and agent into `system` (so a failed start is still stopped by the caller). */
async function startSystem(system: Partial<System>, dataDir?: string): Promise<System> {
  // Heartbeats every second: a loop stalled for the store's 5 s wait would cost the agent its session.
  const server = (system.server = await startServer({ ...(dataDir ? { dataDir } : {}), env: { SVC_HEARTBEAT_MS: '1000' } }));
  // A data dir given to the harness counts as a restart: the first account is made here.
  server.token ??= await server.createAccount('faults@example.com');
  system.origin = await startOrigin();
  system.agent = await startAgent(server, { token: server.token, target: system.origin.port });
  return system as System;
}

async function stopSystem(system: Partial<System>, keepData = false): Promise<void> {
  await system.agent?.close();
  await system.origin?.close();
  await system.server?.close({ keepData });
}

function assertAgentKeptItsSession(agent: TestAgent): void {
  const lost = [...agent.proc.lines, ...agent.proc.stderrLines].filter((l) => /lost|reconnect/i.test(l));
  assert.deepEqual(lost, [], 'the agent kept its session');
}

describe('SQLite locked by another process for 10 s under traffic', () => {
  const system: Partial<System> = {};
  let holder: SqliteLockHolder | undefined;
  before(() => startSystem(system));
  after(async () => {
    await holder?.close();
    await stopSystem(system);
  });

  it('keeps proxying, answers the API 503 with Retry-After, keeps the inspector records and recovers', async () => {
    const { server, agent } = system as System;
    const token = server.token!;
    // Paced: the queue holds 10,000 records while the store is away (beyond, drops are counted by
    // design), and an unpaced visitor on a fast build passes that within the lock's 10 s.
    const visitors = new VisitorLoop(server, agent.hostname, 4);
    await visitors.more(20);

    holder = await SqliteLockHolder.lock(path.join(server.dataDir, SQLITE_FILE));
    const atLock = visitors.count;
    // Two writes in a row, each refused after the store's 5 s wait: the lock is held >= 10 s.
    for (const attempt of ['first', 'second']) {
      const refused = await writeKey(server, token, `${attempt} write under the lock`);
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.headers.get('retry-after'), '5');
    }
    // Reads go on under a writer's lock (WAL), and so does the metrics page.
    assert.equal((await inspectorPaths(server, token)).length > 0, true);
    await server.proc.waitForLine(/inspector store unavailable; batch kept for the next write/);
    const duringLock = visitors.count - atLock;
    assert.equal(await holder.release(), 'ok');
    holder = undefined;

    // Recovered by itself: the API writes again and the inspector catches up.
    assert.equal((await writeKey(server, token, 'after the lock')).status, 201);
    await server.proc.waitForLine(/inspector writes recovered/);
    await visitors.more(20);
    await visitors.stop();
    assert.ok(duringLock >= 50, `visitors kept being served during the lock (${duringLock})`);
    assert.deepEqual(visitors.failures(), { statuses: {}, errors: [] });
    assert.equal(await metric(server, 'svc_inspector_dropped_total'), 0);
    // Every visit is recorded once the queue has been written (the last ones within a flush).
    await eventually(
      () => metric(server, 'svc_inspector_written_total'),
      (written) => written >= visitors.count,
      `all ${visitors.count} visits recorded`,
    );
    assertAgentKeptItsSession(agent);
  });
});

const TMPFS_BYTES = 4 * 1024 * 1024;

/** Mounts a small tmpfs (root only); undefined when this machine does not allow it. */
async function mountTmpfs(dir: string): Promise<boolean> {
  try {
    await execFileAsync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES}`, 'tmpfs', dir]);
    return true;
  } catch {
    return false;
  }
}

/** Fills the filesystem of `file`'s directory to the last byte; returns the bytes written. */
async function fillDisk(file: string): Promise<number> {
  const handle = await open(file, 'w');
  const block = Buffer.alloc(4096, 1);
  let written = 0;
  try {
    for (;;) {
      const { bytesWritten } = await handle.write(block);
      written += bytesWritten;
      if (bytesWritten < block.length) break;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    await handle.close();
  }
  return written;
}

describe('the data disk full under traffic (a 4 MiB tmpfs)', () => {
  let mountDir: string | undefined;
  let mounted = false;
  let system: Partial<System> = {};
  let skip: string | false = false;
  before(async () => {
    const temp = await tempDir('svc-diskfull-');
    mountDir = temp.dir;
    mounted = process.getuid?.() === 0 && (await mountTmpfs(mountDir));
    if (!mounted) {
      skip = 'mounting a tmpfs needs root and a mount-capable container';
      if (process.env.CI === 'true') assert.fail(`${skip}; CI runs as root and must run this test`);
      return;
    }
    await mkdir(path.join(mountDir, 'data'));
    await startSystem(system, path.join(mountDir, 'data'));
  });
  after(async () => {
    await stopSystem(system, true);
    if (mounted && mountDir) await execFileAsync('umount', ['-l', mountDir]);
    if (mountDir) await rm(mountDir, { recursive: true, force: true });
  });

  it('keeps proxying, answers the API 503, drops nothing it can keep, and recovers once space is freed', async (t) => {
    if (skip) return t.skip(skip);
    const { server, agent } = system as System;
    const token = server.token!;
    // Paced: the queue holds 10,000 records while the store is away (beyond, drops are counted by
    // design), and an unpaced visitor on a fast build passes that within the lock's 10 s.
    const visitors = new VisitorLoop(server, agent.hostname, 4);
    await visitors.more(20);
    const filler = path.join(mountDir!, 'filler');
    await fillDisk(filler);

    // The WAL grows with every inspector batch: the disk is full for the store within a few.
    await server.proc.waitForLine(/inspector store unavailable; batch kept for the next write/);
    let refused: Awaited<ReturnType<typeof writeKey>> | undefined;
    for (let i = 0; i < 50 && refused?.status !== 503; i++) {
      const r = await writeKey(server, token, `write ${i} on a full disk`);
      assert.ok(r.status === 201 || r.status === 503, r.text);
      refused = r;
    }
    assert.equal(refused?.status, 503, 'a write met the full disk');
    assert.equal(refused.headers.get('retry-after'), '5');
    const atFull = visitors.count;
    await visitors.more(50);
    const duringFull = visitors.count - atFull;

    await rm(filler);
    assert.equal((await writeKey(server, token, 'after space was freed')).status, 201);
    await server.proc.waitForLine(/inspector writes recovered/);
    await visitors.more(20);
    await visitors.stop();
    assert.ok(duringFull >= 50);
    assert.deepEqual(visitors.failures(), { statuses: {}, errors: [] });
    assert.ok((await inspectorPaths(server, token)).includes('/during-fault'));
    assert.equal(await metric(server, 'svc_inspector_dropped_total'), 0);
    assertAgentKeptItsSession(agent);

    await stopSystem(system, true);
    system = {};
    const integrity = await SqliteLockHolder.lock(path.join(mountDir!, 'data', SQLITE_FILE));
    assert.equal(await integrity.release(), 'ok');
  });
});
