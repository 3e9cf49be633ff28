import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { DecodedPage, pagesFromRecords, STORED_PAGE_COLUMNS } from './request-pages.js';
import { prunePages, PRUNE_CHUNK_PAGES } from './request-pages-retention.js';
import {
  clampedLimit,
  isAfter,
  statusClassRange,
  type RequestBatchWriter,
  type RequestCursor,
  type RequestQuery,
  type RequestRecord,
  type RequestRepo,
} from './request-records.js';
import { idFromParts, newIdParts } from './request-rows.js';
import type { Database } from '../schema.js';

// The inspector records repo on SQLite, over `request_pages` (request-pages.ts). PostgreSQL
// keeps a row per record (requests-repo.ts); both pass the same contract (requests.contract.ts).

/** Pages fetched per query of a newest-first walk: most lists end within the first two. */
const PAGES_PER_READ = 4;

/** The columns a reader decodes, plus the page's key. */
const PAGE_COLUMNS = ['newest_ts', 'newest_id', ...STORED_PAGE_COLUMNS] as const;

/** Bounds on page keys that let a walk skip pages holding no record a query can match. */
interface PageBounds {
  /** Only pages whose oldest record is at or before this timestamp. */
  oldestAtMost?: number | undefined;
  /** Only pages whose oldest record is before this timestamp. */
  oldestBelow?: number | undefined;
  /** Only pages whose newest record is at or after this timestamp. */
  newestAtLeast?: number | undefined;
}

/** The account's pages in order of their newest record, newest first, a few per query. */
async function* pagesNewestFirst(db: Kysely<Database>, accountId: string, bounds: PageBounds) {
  let after: RequestCursor | undefined;
  for (;;) {
    let query = db.selectFrom('request_pages').select(PAGE_COLUMNS).where('account_id', '=', accountId);
    if (bounds.oldestAtMost !== undefined) query = query.where('oldest_ts', '<=', bounds.oldestAtMost);
    if (bounds.oldestBelow !== undefined) query = query.where('oldest_ts', '<', bounds.oldestBelow);
    if (bounds.newestAtLeast !== undefined) query = query.where('newest_ts', '>=', bounds.newestAtLeast);
    const from = after;
    if (from) query = query.where((eb) => eb(eb.refTuple('newest_ts', 'newest_id'), '<', eb.tuple(from.timestamp, from.id)));
    const pages = await query.orderBy('newest_ts', 'desc').orderBy('newest_id', 'desc').limit(PAGES_PER_READ).execute();
    yield* pages;
    const last = pages.at(-1);
    if (!last || pages.length < PAGES_PER_READ) return;
    after = { timestamp: last.newest_ts, id: last.newest_id };
    // SQLite runs on the event loop: a long walk (a filter few records match) lets visitors'
    // requests in between reads, rather than holding the loop for all of it.
    await nextLoopTurn();
  }
}

/** A record that matched a query: where to build it from, once it is known to be returned. */
interface Candidate {
  timestamp: number;
  id: string;
  page: DecodedPage;
  row: number;
}

const newestFirst = (a: Candidate, b: Candidate): number => (isAfter(a, b) ? -1 : isAfter(b, a) ? 1 : 0);

/**
 * The account's records matching `query`, newest first. Pages overlap in time, so this is a
 * merge: pages are visited newest record first, and the walk stops at a page whose newest
 * record is older than the `limit`-th match so far, since no later page can hold a newer one.
 */
async function listPaged(db: Kysely<Database>, accountId: string, query: RequestQuery): Promise<RequestRecord[]> {
  const limit = clampedLimit(query.limit);
  const { since, until, status, before } = query;
  const [statusFrom, statusTo] = query.statusClass === undefined ? [-Infinity, Infinity] : statusClassRange(query.statusClass);
  const host = query.host?.toLowerCase();
  const method = query.method?.toUpperCase();
  const bounds = { oldestAtMost: before?.timestamp, oldestBelow: until, newestAtLeast: since };
  let matches: Candidate[] = [];
  for await (const stored of pagesNewestFirst(db, accountId, bounds)) {
    if (matches.length === limit && !isAfter({ timestamp: stored.newest_ts, id: stored.newest_id }, matches[limit - 1]!)) break;
    const page = new DecodedPage(stored);
    // A string filter no record of the page has skips the page without a scan.
    const hostIndex = host === undefined ? undefined : page.stringIndex(host);
    const tunnelIndex = query.tunnelId === undefined ? undefined : page.stringIndex(query.tunnelId);
    const methodIndex = method === undefined ? undefined : page.stringIndex(method);
    if (hostIndex === -1 || tunnelIndex === -1 || methodIndex === -1) continue;
    for (let row = 0; row < page.count; row++) {
      const timestamp = page.timestamp(row);
      if (since !== undefined && timestamp < since) continue;
      if (until !== undefined && timestamp >= until) continue;
      if (hostIndex !== undefined && page.textAt(row, 'host') !== hostIndex) continue;
      if (tunnelIndex !== undefined && page.textAt(row, 'tunnel_id') !== tunnelIndex) continue;
      if (methodIndex !== undefined && page.textAt(row, 'method') !== methodIndex) continue;
      if (status !== undefined && page.status(row) !== status) continue;
      if (page.status(row) < statusFrom || page.status(row) > statusTo) continue;
      const candidate = { timestamp, id: page.id(row), page, row };
      if (before !== undefined && !isAfter(before, candidate)) continue;
      matches.push(candidate);
    }
    matches.sort(newestFirst);
    if (matches.length > limit) matches = matches.slice(0, limit);
  }
  return matches.map(({ page, row }) => page.record(row));
}

export interface PagedRequestRepoOptions {
  /** The writer thread (open-store); without it (tests, in-memory files) pages are inserted on this connection. */
  writer?: RequestBatchWriter | undefined;
  /** Pages per retention DELETE (default PRUNE_CHUNK_PAGES); tests make it small. */
  pruneChunkPages?: number;
}

/** The inspector records repo over `request_pages`, on SQLite. */
export function createPagedRequestRepo(db: Kysely<Database>, options: PagedRequestRepoOptions = {}): RequestRepo {
  const { writer, pruneChunkPages = PRUNE_CHUNK_PAGES } = options;
  return {
    async insertBatch(records) {
      const idParts = newIdParts(records.length);
      const ids = { idAt: (index: number) => idFromParts(records[index]!.timestamp, idParts, index) };
      if (records.length === 0) return ids;
      if (writer) {
        await writer.write(records, idParts);
        return ids;
      }
      const pages = pagesFromRecords(records, idParts);
      // One transaction: all of the batch or none of it.
      await db.transaction().execute(async (trx) => {
        for (const page of pages) await trx.insertInto('request_pages').values(page).execute();
      });
      return ids;
    },
    list: (accountId, query) => listPaged(db, accountId, query),
    prune: (limits) => prunePages(db, limits, pruneChunkPages),
  };
}
