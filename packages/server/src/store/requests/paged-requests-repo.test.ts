import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrateToLatest } from '../migrations/migrations.js';
import { createPagedRequestRepo } from './paged-requests-repo.js';
import { DecodedPage, type StoredPage } from './request-pages.js';
import { isAfter, type NewRequestRecord, type RequestQuery, type RequestRecord, type RequestRepo } from './request-records.js';
import type { Database } from '../schema.js';

// The paged repo against a brute force over the same records: pages written in batches whose
// time ranges overlap (as slow requests make them), then every query and every prune compared
// with sorting and filtering all records. The store contract (requests.contract.ts) holds both
// engines to the same behaviour on small cases; this looks for the merge's and retention's edges.

/** Deterministic pseudo-random numbers (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const newestFirst = (a: RequestRecord, b: RequestRecord): number => (isAfter(a, b) ? -1 : isAfter(b, a) ? 1 : 0);

describe('paged inspector records (SQLite in memory)', () => {
  let raw: BetterSqlite3.Database;
  let db: Kysely<Database>;
  let deletes = 0;

  before(async () => {
    raw = new BetterSqlite3(':memory:');
    db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: raw }),
      log: (event) => {
        if (event.level === 'query' && /^delete/i.test(event.query.sql)) deletes++;
      },
    });
    await migrateToLatest(db);
  });
  after(async () => {
    await db.destroy();
  });

  /** Every stored record of an account, read straight from the pages (no merge walk). */
  const stored = (accountId: string): RequestRecord[] =>
    (raw.prepare('select * from request_pages where account_id = ?').all(accountId) as StoredPage[])
      .flatMap((page) => new DecodedPage(page).records())
      .sort(newestFirst);

  /**
   * Writes `batches` batches for `accountId` (and a little of another account in each, so
   * batches split into pages): timestamps drift forward, but one record in eight arrived up to
   * 400 ms earlier, as a slow request captured late does, so pages overlap. Many records share
   * a millisecond, so ids decide ties.
   */
  async function fill(repo: RequestRepo, accountId: string, seed: number, batches: number): Promise<void> {
    const next = random(seed);
    let clock = 1_000_000;
    for (let b = 0; b < batches; b++) {
      const batch: NewRequestRecord[] = [];
      const size = 1 + Math.floor(next() * 60);
      for (let i = 0; i < size; i++) {
        clock += Math.floor(next() * 3);
        const late = next() < 1 / 8 ? Math.floor(next() * 400) : 0;
        batch.push({
          accountId: next() < 0.9 ? accountId : `${accountId}_other`,
          tunnelId: next() < 0.2 ? undefined : `tun_${Math.floor(next() * 3)}`,
          timestamp: clock - late,
          method: next() < 0.7 ? 'GET' : 'POST',
          path: `/p/${Math.floor(next() * 1000)}`,
          status: next() < 0.8 ? 200 : 404,
          durationMs: late,
          bytes: Math.floor(next() * 5000),
          ip: '198.51.100.1',
          userAgent: 'fuzz',
          proto: 'HTTP/1.1',
          host: next() < 0.5 ? 'a.localhost' : 'B.localhost',
        });
      }
      await repo.insertBatch(batch);
    }
  }

  function expected(all: RequestRecord[], query: RequestQuery): RequestRecord[] {
    return all
      .filter(
        (r) =>
          (query.host === undefined || r.host === query.host.toLowerCase()) &&
          (query.tunnelId === undefined || r.tunnelId === query.tunnelId) &&
          (query.status === undefined || r.status === query.status) &&
          (query.method === undefined || r.method === query.method.toUpperCase()) &&
          (query.since === undefined || r.timestamp >= query.since) &&
          (query.until === undefined || r.timestamp < query.until) &&
          (query.before === undefined || isAfter(query.before, r)),
      )
      .slice(0, query.limit);
  }

  it('list returns exactly what sorting and filtering every record would, over overlapping pages', async () => {
    const repo = createPagedRequestRepo(db);
    await fill(repo, 'acc_list', 1, 120);
    const all = stored('acc_list');
    assert.ok(all.length > 2000, `${all.length} records`);
    const pick = random(2);
    const queries: RequestQuery[] = [
      { limit: 1 },
      { limit: 50 },
      { limit: 1000 },
      { limit: 7, host: 'b.LOCALHOST' },
      { limit: 30, tunnelId: 'tun_1', method: 'post' },
    ];
    for (let i = 0; i < 40; i++) {
      const at = all[Math.floor(pick() * all.length)]!;
      queries.push({
        limit: 1 + Math.floor(pick() * 200),
        status: pick() < 0.3 ? 404 : undefined,
        since: pick() < 0.3 ? at.timestamp - 300 : undefined,
        until: pick() < 0.3 ? at.timestamp + 50 : undefined,
        before: pick() < 0.6 ? { timestamp: at.timestamp, id: at.id } : undefined,
        host: pick() < 0.2 ? 'a.localhost' : undefined,
      });
    }
    for (const query of queries) {
      assert.deepEqual(await repo.list('acc_list', query), expected(all, query), JSON.stringify(query));
    }
    assert.deepEqual(await repo.list('acc_list', { limit: 10, host: 'nowhere.localhost' }), []);
  });

  it('paging with the before cursor visits every record once, in order', async () => {
    const repo = createPagedRequestRepo(db);
    const all = stored('acc_list');
    const seen: RequestRecord[] = [];
    for (let page = await repo.list('acc_list', { limit: 97 }); page.length > 0;) {
      seen.push(...page);
      const last = page.at(-1)!;
      page = await repo.list('acc_list', { limit: 97, before: { timestamp: last.timestamp, id: last.id } });
    }
    assert.deepEqual(seen, all);
  });

  /** Every account this suite writes, and what each holds now. */
  const snapshot = (): Map<string, RequestRecord[]> =>
    new Map((raw.prepare('select distinct account_id from request_pages').pluck().all() as string[]).map((id) => [id, stored(id)]));

  it('prune by cap keeps exactly the newest records, ties on a millisecond included', async () => {
    const repo = createPagedRequestRepo(db, { pruneChunkPages: 3 });
    await fill(repo, 'acc_cap', 3, 80);
    const beforePrune = snapshot();
    const records = beforePrune.get('acc_cap')!;
    // A cap that falls inside a millisecond shared by several records.
    let cap = 1000;
    while (records[cap]!.timestamp !== records[cap - 1]!.timestamp) cap++;
    const deleted = await repo.prune({ olderThanMs: 0, maxPerAccount: cap });
    let expectedDeleted = 0;
    for (const [id, held] of beforePrune) {
      expectedDeleted += Math.max(0, held.length - cap);
      assert.deepEqual(stored(id), held.slice(0, cap), id);
    }
    assert.ok(expectedDeleted > records.length - cap, 'other accounts were cut too');
    assert.equal(deleted, expectedDeleted);
  });

  it('prune by age deletes every record before the cutoff and rewrites the pages straddling it', async () => {
    const repo = createPagedRequestRepo(db, { pruneChunkPages: 3 });
    await fill(repo, 'acc_age', 4, 60);
    const beforePrune = snapshot();
    const all = stored('acc_age');
    const cutoff = all[Math.floor(all.length / 2)]!.timestamp;
    const straddling = raw
      .prepare("select count(*) from request_pages where account_id = 'acc_age' and oldest_ts < ? and newest_ts >= ?")
      .pluck()
      .get(cutoff, cutoff) as number;
    assert.ok(straddling > 0, 'the cutoff falls inside pages');
    deletes = 0;
    const deleted = await repo.prune({ olderThanMs: cutoff, maxPerAccount: 1_000_000 });
    let expectedDeleted = 0;
    for (const [id, records] of beforePrune) {
      const kept = records.filter((r) => r.timestamp >= cutoff);
      expectedDeleted += records.length - kept.length;
      assert.deepEqual(stored(id), kept, id);
    }
    assert.equal(deleted, expectedDeleted);
    assert.ok(deletes > 2, `whole pages went a few per statement (${deletes} DELETEs)`);
  });
});
