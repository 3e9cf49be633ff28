import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { openStore, SQLITE_FILE } from './open-store.js';
import { runStoreContract } from './store.contract.js';

const tempDirs: string[] = [];
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-store-'));
  tempDirs.push(dir);
  return dir;
}
after(async () => {
  await Promise.all(tempDirs.map((d) => rm(d, { recursive: true, force: true })));
});

runStoreContract('sqlite', async (now) => openStore({ dataDir: await freshDir(), now }));

interface Child {
  /** Lets the child open the store. */
  go(): void;
  exited: Promise<{ code: number | null; stderr: string }>;
}

// Starts the fixture in its own node process (under tsx when these tests run
// from source) and resolves once it is loaded and waiting for go().
async function startChild(dataDir: string, email: string): Promise<Child> {
  const fromSource = import.meta.url.endsWith('.ts');
  const fixture = fileURLToPath(new URL(`./sqlite-concurrency.fixture.${fromSource ? 'ts' : 'js'}`, import.meta.url));
  const args = fromSource ? ['--import', 'tsx', fixture, dataDir, email] : [fixture, dataDir, email];
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = once(child, 'exit').then(([code]) => ({ code: code as number | null, stderr }));
  await Promise.race([once(child.stdout, 'data'), exited]);
  return { go: () => child.stdin.end('go\n'), exited };
}

describe('SQLite engine', () => {
  it('creates <dataDir>/svc.sqlite, making missing parent dirs, in WAL mode', async () => {
    const dataDir = join(await freshDir(), 'nested', 'data');
    const store = await openStore({ dataDir });
    await store.close();
    const file = join(dataDir, SQLITE_FILE);
    assert.ok(existsSync(file));
    const raw = new BetterSqlite3(file, { readonly: true });
    try {
      assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      raw.close();
    }
  });

  it('reopening keeps the data and does not re-run migrations', async () => {
    const dataDir = await freshDir();
    const first = await openStore({ dataDir });
    const a = await first.accounts.create({ email: 'keep@example.com', name: 'Keep', plan: 'pro' });
    await first.close();
    const second = await openStore({ dataDir });
    try {
      assert.deepEqual(await second.accounts.byEmail('keep@example.com'), a);
    } finally {
      await second.close();
    }
  });

  it('two opens of one fresh file in the same process both succeed', async () => {
    const dataDir = await freshDir();
    const stores = await Promise.all([openStore({ dataDir }), openStore({ dataDir })]);
    try {
      await stores[0]?.accounts.create({ email: 'same@example.com', name: 'Same', plan: 'free' });
      assert.equal((await stores[1]?.accounts.byEmail('same@example.com'))?.name, 'Same');
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('a second process can write while this one holds the store open', async () => {
    const dataDir = await freshDir();
    const store = await openStore({ dataDir });
    try {
      await store.accounts.create({ email: 'server@example.com', name: 'Server', plan: 'free' });
      const child = await startChild(dataDir, 'cli@example.com');
      child.go();
      const result = await child.exited;
      assert.equal(result.code, 0, result.stderr);
      assert.equal((await store.accounts.byEmail('cli@example.com'))?.name, 'child');
      assert.equal(await store.accounts.count(), 2);
    } finally {
      await store.close();
    }
  });

  it('two processes opening a fresh data dir at once both migrate and write', async () => {
    const dataDir = await freshDir();
    const children = await Promise.all([startChild(dataDir, 'one@example.com'), startChild(dataDir, 'two@example.com')]);
    for (const c of children) c.go();
    const results = await Promise.all(children.map((c) => c.exited));
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const store = await openStore({ dataDir });
    try {
      assert.equal(await store.accounts.count(), 2);
    } finally {
      await store.close();
    }
  });
});
