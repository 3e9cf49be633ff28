import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { createAccountRepo } from '../accounts-repo.js';
import { migrateTo } from '../migrations/migrations.js';
import { createRequestRepo } from './requests-repo.js';
import type { NewRequestRecord, RequestRepo } from './request-records.js';
import type { Database } from '../schema.js';

// Retention's chunking, seen from the SQL it runs: the store contract checks what survives a
// prune on both engines; this checks that no statement deletes more than a chunk, and that
// the event loop gets a turn between chunks (on SQLite statements run on the loop itself).

const CHUNK = 7;

describe('requests repo (rows) retention in chunks (SQLite in memory, at migration 004)', () => {
  let db: Kysely<Database>;
  let repo: RequestRepo;
  let accountId: string;
  let deletes = 0;
  /** OFFSET values of the SELECTs run, in order. */
  const offsets: number[] = [];

  before(async () => {
    db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }),
      log: (event) => {
        if (event.level === 'query' && /^delete/i.test(event.query.sql)) deletes++;
        // Kysely binds LIMIT then OFFSET as the last two parameters.
        if (event.level === 'query' && /^select.* offset \?$/i.test(event.query.sql)) offsets.push(Number(event.query.parameters.at(-1)));
      },
    });
    // The row layout SQLite had before 005 turned it into pages; PostgreSQL still has it.
    await migrateTo(db, '004_requests_clustered');
    // The column migration 020 adds to PostgreSQL's rows.
    await db.schema.alterTable('requests').addColumn('target', 'text').execute();
    repo = createRequestRepo(db, { pruneChunkRows: CHUNK });
    accountId = (await createAccountRepo(db, Date.now).create({ email: 'chunks@example.com', name: 'Chunks', plan: 'free' })).id;
  });
  after(async () => {
    await db.destroy();
  });

  const record = (timestamp: number): NewRequestRecord => ({
    accountId,
    tunnelId: undefined,
    timestamp,
    method: 'GET',
    path: '/',
    status: 200,
    durationMs: 1,
    bytes: 10,
    ip: '127.0.0.1',
    userAgent: 'test',
    proto: 'HTTP/1.1',
    host: 'chunks.localhost',
  });

  it('deletes aged rows and rows past the cap a chunk per statement, yielding between', async () => {
    // 20 aged rows and 30 recent ones, of which the cap keeps 5: 45 rows to delete, the oldest
    // of the account, in 7 statements (six chunks of 7 rows, then 3).
    await repo.insertBatch([
      ...Array.from({ length: 20 }, (_, i) => record(1000 + i)),
      ...Array.from({ length: 30 }, (_, i) => record(1_000_000 + i)),
    ]);
    deletes = 0;
    let pruning = true;
    let immediatesWhilePruning = 0;
    const tick = (): void => {
      if (!pruning) return;
      immediatesWhilePruning++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const deleted = await repo.prune({ olderThanMs: 500_000, maxPerAccount: 5 });
    pruning = false;

    assert.equal(deleted, 45);
    assert.equal(deletes, 7, 'one DELETE per chunk');
    assert.ok(immediatesWhilePruning >= 5, `the loop turned between chunks (${immediatesWhilePruning} turns)`);
    const kept = await repo.list(accountId, { limit: 100 });
    assert.deepEqual(
      kept.map((r) => r.timestamp),
      [1_000_029, 1_000_028, 1_000_027, 1_000_026, 1_000_025],
    );
  });

  it('finds the cap a chunk of the key at a time, ties on timestamp included', async () => {
    const other = (await createAccountRepo(db, Date.now).create({ email: 'walk@example.com', name: 'Walk', plan: 'free' })).id;
    // 40 rows, two per millisecond, so the walk's cursor must tell rows of one timestamp apart.
    await repo.insertBatch(Array.from({ length: 40 }, (_, i) => ({ ...record(2_000_000 + Math.floor(i / 2)), accountId: other })));
    const newest = (await repo.list(other, { limit: 100 })).map((r) => r.id);
    offsets.length = 0;
    assert.equal(await repo.prune({ olderThanMs: 0, maxPerAccount: 17 }), 23);
    assert.deepEqual(
      (await repo.list(other, { limit: 100 })).map((r) => r.id),
      newest.slice(0, 17),
    );
    assert.ok(
      offsets.length > 0 && offsets.every((offset) => offset <= CHUNK - 1),
      `no statement skips more than a chunk: ${offsets.join(', ')}`,
    );
  });
});
