import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { openStore, SQLITE_FILE } from '../open-store.js';
import { DecodedPage, type StoredPage } from './request-pages.js';
import type { NewRequestRecord, RequestRecord } from './request-records.js';
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
/** A record the writer refuses (every record has a method). */
const refused = (): NewRequestRecord => ({ ...record('/refused'), method: null }) as unknown as NewRequestRecord;

interface Fixture {
  /** Reads with its own connection, like the store's main connection. */
  reader: BetterSqlite3.Database;
  open(options?: { now?: () => number }): SqliteRequestWriter;
  /** Every stored record, in the order the pages were inserted. */
  records(): RequestRecord[];
  /** Paths of every stored record, in the order the pages were inserted. */
  paths(): string[];
}

/** A migrated database file (openStore made it), a reader on it, and writers to open on it. */
async function fixture(): Promise<Fixture> {
  const dataDir = await freshDir();
  await (await openStore({ dataDir })).close();
  const file = join(dataDir, SQLITE_FILE);
  const reader = new BetterSqlite3(file);
  // Page ids grow with each insert (nothing here deletes), so they give the order batches landed in.
  const records = (): RequestRecord[] =>
    (reader.prepare('select * from request_pages order by page_id').all() as StoredPage[]).flatMap((page) =>
      new DecodedPage(page).records(),
    );
  const writers: SqliteRequestWriter[] = [];
  after(async () => {
    await Promise.all(writers.map((w) => w.close()));
    reader.close();
  });
  return {
    reader,
    open(options = {}) {
      const writer = new SqliteRequestWriter({ file, ...options });
      writers.push(writer);
      return writer;
    },
    records,
    paths: () => records().map((record) => record.path),
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
    assert.deepEqual(
      paths(),
      [...batch('first', 3), ...names.flatMap((name) => batch(name, 300))].map((r) => r.path),
    );
  });

  it('stores the records as the repo would: ids from timestamps, lower-cased host, a page per account', async () => {
    const { open, records, reader } = await fixture();
    await open().write([
      record('/one', { tunnelId: 'tun_1', durationMs: 2.6 }),
      record('/two', { accountId: 'acc_other' }),
      record('/three'),
    ]);
    const [one, three, two] = records();
    assert.match(one!.id, new RegExp(`^req_${T0.toString(16).padStart(12, '0')}[0-9a-f]{16}$`));
    assert.deepEqual({ ...one, id: '' }, { ...record('/one'), id: '', tunnelId: 'tun_1', durationMs: 3, host: 'writer.localhost' });
    assert.deepEqual([three!.path, three!.accountId, two!.path, two!.accountId], ['/three', 'acc_writer', '/two', 'acc_other']);
    const pages = reader.prepare('select account_id, record_count, newest_id from request_pages order by page_id').all();
    assert.deepEqual(pages, [
      { account_id: 'acc_writer', record_count: 2, newest_id: [one!.id, three!.id].sort()[1] },
      { account_id: 'acc_other', record_count: 1, newest_id: two!.id },
    ]);
  });

  it('a refused record rolls back its whole batch and rejects it; later batches are written', async () => {
    const { open, paths } = await fixture();
    const writer = open();
    const failing = writer.write([...batch('lost', 50), refused(), ...batch('lost-after', 5)]);
    const next = writer.write(batch('next', 2));
    await assert.rejects(failing, (error: Error & { code?: string }) => {
      assert.match(error.message, /inspector record 50 has no method/);
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
