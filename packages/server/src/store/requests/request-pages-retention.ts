import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { DecodedPage, pageFromRecords, STORED_PAGE_COLUMNS } from './request-pages.js';
import { isAfter, newerKey, type RequestCursor } from './request-records.js';
import { accountsWithRecords } from './requests-repo.js';
import type { Database } from '../schema.js';

// Inspector retention over `request_pages` (request-pages.ts): by age and by a per-account
// cap, both exact to the record. Both limits doom a prefix of the account's (timestamp, id)
// order, so each account gets one cut key; whole pages at or before it are deleted, and the
// few pages that straddle it are rewritten with their newer records. Statements run on the
// event loop (SQLite is synchronous), so work comes in small steps with a loop turn between.

/**
 * Whole pages per retention DELETE. A full page holds a 256-record batch (~25 KB): 16 pages
 * free ~100 database pages per statement, a few ms of the loop at most.
 */
export const PRUNE_CHUNK_PAGES = 16;

/** Sorts after every id (ids are `req_` and hex digits): a key that covers a whole millisecond. */
const AFTER_EVERY_ID = '\uffff';

/** Deletes records older than `olderThanMs`, then each account's beyond its newest `maxPerAccount`; returns how many. */
export async function prunePages(
  db: Kysely<Database>,
  { olderThanMs, maxPerAccount }: { olderThanMs: number; maxPerAccount: number },
  chunkPages: number,
): Promise<number> {
  let deleted = 0;
  for await (const accountId of accountsWithRecords(db, 'request_pages')) {
    const cut = newerKey(await capCut(db, accountId, maxPerAccount), await ageCut(db, accountId, olderThanMs));
    if (cut) deleted += await deleteThrough(db, accountId, cut, chunkPages);
  }
  return deleted;
}

/** The newest key age retention deletes through, if the account has a record older than the cutoff. */
async function ageCut(db: Kysely<Database>, accountId: string, olderThanMs: number): Promise<RequestCursor | undefined> {
  const old = await db
    .selectFrom('request_pages')
    .select('page_id')
    .where('account_id', '=', accountId)
    .where('oldest_ts', '<', olderThanMs)
    .limit(1)
    .executeTakeFirst();
  // Timestamps are whole ms: "before olderThanMs" is "at or before its last whole ms, any id".
  return old ? { timestamp: Math.ceil(olderThanMs) - 1, id: AFTER_EVERY_ID } : undefined;
}

/**
 * The key of the account's newest record past its cap (position `cap` newest first), or
 * undefined when it has at most `cap` records. Pages overlap in time, so positions are not
 * sums of page counts. Counting the records at or after a timestamp is: whole pages that begin
 * there, plus the records of the few pages straddling it. A binary search over timestamps
 * finds the millisecond the cut falls in, then that millisecond's ids place it exactly.
 */
async function capCut(db: Kysely<Database>, accountId: string, cap: number): Promise<RequestCursor | undefined> {
  const span = await db
    .selectFrom('request_pages')
    .select((eb) => [
      eb.fn.sum<number>('record_count').as('total'),
      eb.fn.min<number>('oldest_ts').as('oldest'),
      eb.fn.max<number>('newest_ts').as('newest'),
    ])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  if (Number(span.total ?? 0) <= cap) return undefined;
  const straddling = new StraddlingPages(db, accountId);
  // Invariant: more than `cap` records at or after `low`, at most `cap` at or after `high`.
  let low = Number(span.oldest);
  let high = Number(span.newest) + 1;
  while (high - low > 1) {
    const middle = low + Math.floor((high - low) / 2);
    if ((await straddling.countFrom(middle)) > cap) low = middle;
    else high = middle;
    await nextLoopTurn();
  }
  // The cut is in millisecond `low`: keep its newest (cap - newer) records, by id.
  const newer = await straddling.countFrom(low + 1);
  const id = (await straddling.idsAt(low))[cap - newer];
  // Undefined only when the writer thread added records mid-search; the next run cuts them.
  return id === undefined ? undefined : { timestamp: low, id };
}

/** Page reads of capCut's search, each page decoded at most once. */
class StraddlingPages {
  /** Sorted timestamps of pages decoded so far, by page id. */
  private readonly timestamps = new Map<number, Float64Array>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly accountId: string,
  ) {}

  /** How many of the account's records have a timestamp at or after `ms`. */
  async countFrom(ms: number): Promise<number> {
    const whole = await this.db
      .selectFrom('request_pages')
      .select((eb) => eb.fn.sum<number>('record_count').as('records'))
      .where('account_id', '=', this.accountId)
      .where('oldest_ts', '>=', ms)
      .executeTakeFirstOrThrow();
    let count = Number(whole.records ?? 0);
    for (const sorted of await this.covering(ms)) count += sorted.length - firstAtOrAfter(sorted, ms);
    return count;
  }

  /** Ids of the account's records of millisecond `ms`, newest first. */
  async idsAt(ms: number): Promise<string[]> {
    const pages = await this.db
      .selectFrom('request_pages')
      .select(STORED_PAGE_COLUMNS)
      .where('account_id', '=', this.accountId)
      .where('oldest_ts', '<=', ms)
      .where('newest_ts', '>=', ms)
      .execute();
    const ids: string[] = [];
    for (const stored of pages) {
      const page = new DecodedPage(stored);
      for (let row = 0; row < page.count; row++) if (page.timestamp(row) === ms) ids.push(page.id(row));
    }
    return ids.sort().reverse();
  }

  /** Sorted timestamps of the pages that begin before `ms` and end at or after it. */
  private async covering(ms: number): Promise<Float64Array[]> {
    const rows = await this.db
      .selectFrom('request_pages')
      .select('page_id')
      .where('account_id', '=', this.accountId)
      .where('oldest_ts', '<', ms)
      .where('newest_ts', '>=', ms)
      .execute();
    const result: Float64Array[] = [];
    for (const { page_id } of rows) {
      let sorted = this.timestamps.get(page_id);
      if (!sorted) {
        const stored = await this.db
          .selectFrom('request_pages')
          .select(STORED_PAGE_COLUMNS)
          .where('page_id', '=', page_id)
          .executeTakeFirstOrThrow();
        const page = new DecodedPage(stored);
        sorted = Float64Array.from({ length: page.count }, (_, row) => page.timestamp(row)).sort();
        this.timestamps.set(page_id, sorted);
      }
      result.push(sorted);
    }
    return result;
  }
}

/** Index of the first value >= `ms` in ascending `sorted` (its length when none is). */
function firstAtOrAfter(sorted: Float64Array, ms: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < ms) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Deletes the account's records at or before `cut`: whole pages oldest first, `chunkPages` per
 * statement, then rewrites each page that also holds newer records. Returns how many records.
 */
async function deleteThrough(db: Kysely<Database>, accountId: string, cut: RequestCursor, chunkPages: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const doomed = await db
      .selectFrom('request_pages')
      .select(['page_id', 'record_count'])
      .where('account_id', '=', accountId)
      .where((eb) => eb(eb.refTuple('newest_ts', 'newest_id'), '<=', eb.tuple(cut.timestamp, cut.id)))
      .orderBy('newest_ts')
      .orderBy('newest_id')
      .limit(chunkPages)
      .execute();
    if (doomed.length === 0) break;
    await db
      .deleteFrom('request_pages')
      .where(
        'page_id',
        'in',
        doomed.map((page) => page.page_id),
      )
      .execute();
    for (const page of doomed) deleted += page.record_count;
    await nextLoopTurn();
    if (doomed.length < chunkPages) break;
  }
  const straddling = await db
    .selectFrom('request_pages')
    .select('page_id')
    .where('account_id', '=', accountId)
    .where('oldest_ts', '<=', cut.timestamp)
    .where((eb) => eb(eb.refTuple('newest_ts', 'newest_id'), '>', eb.tuple(cut.timestamp, cut.id)))
    .execute();
  for (const { page_id } of straddling) {
    const stored = await db.selectFrom('request_pages').select(STORED_PAGE_COLUMNS).where('page_id', '=', page_id).executeTakeFirst();
    // Another prune may have rewritten or deleted it meanwhile; the writer thread only inserts.
    if (!stored) continue;
    const records = new DecodedPage(stored).records();
    const kept = records.filter((record) => isAfter(record, cut));
    if (kept.length === records.length) continue;
    // The page's newest record is after the cut, so at least that one is kept.
    const { oldest_ts, record_count, format, strings, vals, id_parts } = pageFromRecords(kept);
    await db
      .updateTable('request_pages')
      .set({ oldest_ts, record_count, format, strings, vals, id_parts })
      .where('page_id', '=', page_id)
      .execute();
    deleted += records.length - kept.length;
    await nextLoopTurn();
  }
  return deleted;
}
