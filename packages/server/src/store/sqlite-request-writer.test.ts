import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { openStore, SQLITE_FILE } from './open-store.js';
import type { NewRequestRecord } from './request-records.js';
import { singleRowInsert } from './requests-repo.js';
import type { Database } from './schema.js';
import { SqliteRequestWriter } from './sqlite-request-writer.js';

const tempDirs: string[] = [];
after(async () => {
  await Promise.all(tempDirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-request-writer-'));
  tempDirs.push(dir);
  return dir;
}

const T0 = 1_750_000_000_000;
function record(path: string, over: Partial<NewRequestRecord> = {}): NewRequestRecord {
  return {
    accountId: 'acc_writer',
    tunnelId: undefined,
    timestamp: T0,
    method: 'GET',
    path,
    status: 200,
    durationMs: 3,
    bytes: 10,
    ip: '203.0.113.1',
    userAgent: 'test',
    proto: 'HTTP/1.1',
    host: 'Writer.Localhost',
    ...over,
  };
}
const batch = (name: string, size: number): NewRequestRecord[] => Array.from({ length: size }, (_, i) => record(`/${name}/${i}`));
/** A record the table refuses (requests.method is NOT NULL). */
const refused = (): NewRequestRecord => ({ ...record('/refused'), method: null } as unknown as NewRequestRecord);

interface Fixture {
  /** Reads with its own connection, like the store's main connection. */
  reader: BetterSqlite3.Database;
  open(options?: { now?: () => number }): SqliteRequestWriter;
  /** Paths of all rows in the order they were inserted (the table is clustered by time, not by insertion). */
  paths(): string[];
}

/** A migrated database file (openStore made it), a reader on it, and writers to open on it. */
async function fixture(): Promise<Fixture> {
  const dataDir = await freshDir();
  await (await openStore({ dataDir })).close();
  const file = join(dataDir, SQLITE_FILE);
  const reader = new BetterSqlite3(file);
  // A log the writer's inserts fill in commit order, so tests can see the order batches landed in.
  reader.exec(`create table insert_log (seq integer primary key, path text not null);
    create trigger requests_insert_log after insert on requests begin insert into insert_log (path) values (new.path); end;`);
  const insert = singleRowInsert(new Kysely<Database>({ dialect: new SqliteDialect({ database: reader }) }));
  const writers: SqliteRequestWriter[] = [];
  after(async () => {
    await Promise.all(writers.map((w) => w.close()));
    reader.close();
  });
  return {
    reader,
    open(options = {}) {
      const writer = new SqliteRequestWriter({ file, insert, ...options });
      writers.push(writer);
      return writer;
    },
    paths: () => reader.prepare('select path from insert_log order by seq').pluck().all() as string[],
  };
}

describe('SqliteRequestWriter', () => {
  it('starts no thread before the first batch', async () => {
    const { open } = await fixture();
    const writer = open();
    assert.equal(writer.runningThread, undefined);
    await writer.close();
    await assert.rejects(writer.write(batch('late', 1)), /closed/);
    assert.equal(writer.runningThread, undefined);
  });

  it('commits batches in the order write was called, each visible to another connection once it resolves', async () => {
    const { open, paths } = await fixture();
    const writer = open();
    await writer.write(batch('first', 3));
    assert.deepEqual(paths(), ['/first/0', '/first/1', '/first/2']);
    const resolved: string[] = [];
    const names = ['a', 'b', 'c', 'd'];
    // Posted back to back, without waiting in between.
    await Promise.all(names.map((name) => writer.write(batch(name, 300)).then(() => resolved.push(name))));
    assert.deepEqual(resolved, names);
    assert.deepEqual(paths(), [...batch('first', 3), ...names.flatMap((name) => batch(name, 300))].map((r) => r.path));
  });

  it('stores the rows as the repo would: ids from timestamps, lower-cased host', async () => {
    const { open, reader } = await fixture();
    await open().write([record('/one', { tunnelId: 'tun_1', durationMs: 2.6 })]);
    const row = reader.prepare('select * from requests').get() as Record<string, unknown>;
    assert.match(String(row.id), new RegExp(`^req_${T0.toString(16).padStart(12, '0')}[0-9a-f]{16}$`));
    assert.equal(row.host, 'writer.localhost');
    assert.equal(row.tunnel_id, 'tun_1');
    assert.equal(row.duration_ms, 3);
  });

  it('a refused record rolls back its whole batch and rejects it; later batches are written', async () => {
    const { open, paths } = await fixture();
    const writer = open();
    const failing = writer.write([...batch('lost', 50), refused(), ...batch('lost-after', 5)]);
    const next = writer.write(batch('next', 2));
    await assert.rejects(failing, (error: Error & { code?: string }) => {
      assert.match(error.message, /NOT NULL constraint failed: requests\.method/);
      assert.equal(error.code, 'SQLITE_CONSTRAINT_NOTNULL');
      return true;
    });
    await next;
    assert.deepEqual(paths(), ['/next/0', '/next/1']);
  });

  it('a record that cannot be converted (no host) rejects its batch without writing any of it', async () => {
    const { open, paths } = await fixture();
    const writer = open();
    const hostless = { ...record('/hostless'), host: undefined } as unknown as NewRequestRecord;
    await assert.rejects(writer.write([record('/kept-out'), hostless]), /toLowerCase/);
    assert.deepEqual(paths(), []);
  });

  it('a record that cannot be cloned rejects at once, and the writer keeps working', async () => {
    const { open, paths } = await fixture();
    const writer = open();
    const uncloneable = { ...record('/fn'), path: () => '/fn' } as unknown as NewRequestRecord;
    await assert.rejects(writer.write([uncloneable]), /could not be cloned/);
    await writer.write([record('/after')]);
    assert.deepEqual(paths(), ['/after']);
  });

  it('close waits for the batches in flight, ends the thread, and refuses later writes', async () => {
    const { open, paths } = await fixture();
    const writer = open();
    let written = false;
    const inFlight = writer.write(batch('in-flight', 2000)).then(() => (written = true));
    const thread = writer.runningThread!;
    const exited = new Promise<number>((resolve) => thread.once('exit', resolve));
    await writer.close();
    assert.equal(written, true, 'the batch was committed before close resolved');
    assert.equal(await exited, 0, 'the thread ended on its own');
    assert.equal(writer.runningThread, undefined);
    assert.equal(paths().length, 2000);
    await inFlight;
    await assert.rejects(writer.write(batch('late', 1)), /closed/);
    await writer.close();
  });

  it('when the thread dies, the batch in flight rejects unwritten; the next write restarts it after the interval', async () => {
    const { open, paths } = await fixture();
    let now = 0;
    const writer = open({ now: () => now });
    await writer.write(batch('before', 1));
    // Large enough to be mid-transaction when terminate() lands.
    const inFlight = writer.write(batch('killed', 50_000));
    await writer.runningThread!.terminate();
    await assert.rejects(inFlight, /writer thread stopped/);
    assert.equal(writer.runningThread, undefined);
    // Within a second of the last start: no restart, the same error at once.
    await assert.rejects(writer.write(batch('too-soon', 1)), /writer thread stopped/);
    assert.equal(writer.runningThread, undefined);
    now = 1000;
    await writer.write(batch('after', 1));
    assert.notEqual(writer.runningThread, undefined);
    assert.deepEqual(paths(), ['/before/0', '/after/0'], 'the killed transaction left nothing behind');
  });
});

describe('SQLite store inspector writes', () => {
  it('insertBatch resolves once the rows are visible to list; close waits for a batch in flight', async () => {
    const dataDir = await freshDir();
    const store = await openStore({ dataDir });
    await store.requests.insertBatch(batch('listed', 2));
    assert.deepEqual((await store.requests.list('acc_writer', { limit: 10 })).map((r) => r.path).sort(), ['/listed/0', '/listed/1']);
    let written = false;
    const inFlight = store.requests.insertBatch(batch('at-close', 500)).then(() => (written = true));
    await store.close();
    assert.equal(written, true);
    await inFlight;
    const reopened = await openStore({ dataDir });
    try {
      assert.equal((await reopened.requests.list('acc_writer', { limit: 1000 })).length, 502);
    } finally {
      await reopened.close();
    }
  });
});
