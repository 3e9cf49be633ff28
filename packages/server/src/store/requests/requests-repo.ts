import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { CompiledQuery, type ExpressionBuilder, type Kysely } from 'kysely';
import { clampedLimit, newerKey, statusClassRange, type RequestCursor, type RequestRepo } from './request-records.js';
import { fromRow, REQUEST_COLUMNS, toRows } from './request-rows.js';
import type { Database, RequestsTable } from '../schema.js';

/** Most rows per INSERT: 13 parameters each stays far below SQLite's and PostgreSQL's limits. */
const INSERT_CHUNK_ROWS = 256;

/** Rows in the next INSERT: the cap, else a power of two, so at most 9 statement shapes ever exist. */
function chunkRows(remaining: number): number {
  if (remaining >= INSERT_CHUNK_ROWS) return INSERT_CHUNK_ROWS;
  return 2 ** Math.floor(Math.log2(remaining));
}

/** A multi-row INSERT compiled once: its SQL and, per parameter, the row and column it takes. */
interface InsertPlan {
  rows: number;
  sql: string;
  slots: Array<[row: number, column: keyof RequestsTable]>;
}

/**
 * Compiles the INSERT of `rows` rows. Building and compiling a Kysely INSERT cost about 5 µs
 * per row, paid again at every flush; the SQL of n rows never changes, so callers compile it
 * once per shape. Sentinel values tell which row and column each parameter is, whatever the
 * engine's placeholders and ordering.
 */
function compileInsertPlan(db: Kysely<Database>, rows: number): InsertPlan {
  const sentinels = Array.from({ length: rows }, (_, r) => Object.fromEntries(REQUEST_COLUMNS.map((c, k) => [c, `${r}:${k}`])));
  const compiled = db
    .insertInto('requests')
    .values(sentinels as unknown as RequestsTable[])
    .compile();
  const slots = compiled.parameters.map((p): [number, keyof RequestsTable] => {
    const [r, k] = String(p).split(':').map(Number);
    return [r!, REQUEST_COLUMNS[k!]!];
  });
  return { rows, sql: compiled.sql, slots };
}

/**
 * Rows per DELETE of retention. A busy edge writes ~1M inspector rows a minute, and one
 * statement deleting them all held SQLite (on the event loop) for most of a second: the
 * benchmark's small GET saw p99 650-810 ms and wrk timeouts once a minute. Measured on
 * SQLite, deleting 300,000 of 400,000 rows of one account: 2.6 µs per row in chunks of 2,000
 * (3.1 in chunks of 500, 3.3 in one statement), the loop never held more than ~30 ms. Since
 * the table is clustered by (account_id, timestamp, id) and each chunk is a range of that key:
 * 0.7 µs per row, the loop held at most ~10 ms.
 */
export const PRUNE_CHUNK_ROWS = 2000;

/** A record's place in the order of `requests`' key within an account. */
type RecordKey = RequestCursor;

/**
 * Rows before (or at) `key` in (timestamp, id) order. A row value, so both engines seek to
 * `key` in the table's key instead of filtering every newer row of the account.
 */
function keyBefore(key: RecordKey, orAt = false) {
  return (eb: ExpressionBuilder<Database, 'requests'>) =>
    eb(eb.refTuple('timestamp', 'id'), orAt ? '<=' : '<', eb.tuple(key.timestamp, key.id));
}

/** Rows of one account at or before `key`: a range of the table's key. */
function atOrBefore(accountId: string, key: RecordKey) {
  return (eb: ExpressionBuilder<Database, 'requests'>) => eb.and([eb('account_id', '=', accountId), keyBefore(key, true)(eb)]);
}

/**
 * Deletes the account's records at or before `last`, oldest first, `rowsPerChunk` per
 * statement and a loop turn between statements. Each chunk is a range of the table's key,
 * ended by the chunk's newest row, so no statement walks past rows it keeps. Returns how many.
 */
async function deleteThrough(db: Kysely<Database>, accountId: string, last: RecordKey, rowsPerChunk: number): Promise<number> {
  let total = 0;
  for (;;) {
    const chunkEnd = await db
      .selectFrom('requests')
      .select(['timestamp', 'id'])
      .where(atOrBefore(accountId, last))
      .orderBy('timestamp')
      .orderBy('id')
      .limit(1)
      .offset(rowsPerChunk - 1)
      .executeTakeFirst();
    const result = await db
      .deleteFrom('requests')
      .where(atOrBefore(accountId, chunkEnd ?? last))
      .executeTakeFirst();
    total += Number(result.numDeletedRows);
    if (!chunkEnd) return total;
    await nextLoopTurn();
  }
}

/** The account's newest record, as a query to narrow (one row, newest first). */
function newestFirst(db: Kysely<Database>, accountId: string) {
  return db
    .selectFrom('requests')
    .select(['timestamp', 'id'])
    .where('account_id', '=', accountId)
    .orderBy('timestamp', 'desc')
    .orderBy('id', 'desc')
    .limit(1);
}

/**
 * The account's record at `position` in newest-first order (0 is the newest), or undefined
 * when it has no more records than that. An OFFSET walks the key one entry at a time, so the
 * walk goes `step` entries per statement with a loop turn between: one OFFSET of 100,000
 * held SQLite's event loop ~15 ms, once a minute per busy account.
 */
async function newestAt(db: Kysely<Database>, accountId: string, position: number, step: number): Promise<RecordKey | undefined> {
  let reached: RecordKey | undefined;
  let at = -1;
  while (at < position) {
    const ahead = Math.min(step, position - at);
    let query = newestFirst(db, accountId).offset(ahead - 1);
    if (reached) query = query.where(keyBefore(reached));
    reached = await query.executeTakeFirst();
    if (!reached) return undefined;
    at += ahead;
    if (at < position) await nextLoopTurn();
  }
  return reached;
}

/**
 * The accounts that have inspector records in `table` (rows, or SQLite's pages), one index seek
 * each (a skip scan of the key whose first column is account_id): cheaper than DISTINCT over
 * every row, and it finds records of accounts no longer listed.
 */
export async function* accountsWithRecords(db: Kysely<Database>, table: 'requests' | 'request_pages'): AsyncGenerator<string> {
  let previous: string | undefined;
  for (;;) {
    let query = db.selectFrom(table).select('account_id').orderBy('account_id').limit(1);
    if (previous !== undefined) query = query.where('account_id', '>', previous);
    const row = await query.executeTakeFirst();
    if (!row) return;
    yield (previous = row.account_id);
  }
}

export interface RequestRepoOptions {
  /** Rows per retention DELETE (default PRUNE_CHUNK_ROWS); tests make it small. */
  pruneChunkRows?: number;
}

/**
 * The inspector records repo over `requests`, a row per record: PostgreSQL's (SQLite stores
 * pages, paged-requests-repo.ts). Engine-neutral Kysely, so tests also run it on SQLite at
 * migration 004. Multi-row INSERTs save round trips to the asynchronous driver.
 */
export function createRequestRepo(db: Kysely<Database>, options: RequestRepoOptions = {}): RequestRepo {
  const { pruneChunkRows = PRUNE_CHUNK_ROWS } = options;
  const plans = new Map<number, InsertPlan>();
  const planFor = (rows: number): InsertPlan => {
    let plan = plans.get(rows);
    if (!plan) plans.set(rows, (plan = compileInsertPlan(db, rows)));
    return plan;
  };
  return {
    async insertBatch(records) {
      const rows = toRows(records);
      const ids = { idAt: (index: number) => rows[index]!.id };
      if (rows.length === 0) return ids;
      // One transaction per batch: one fsync for the whole batch, and all or nothing.
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length;) {
          const plan = planFor(chunkRows(rows.length - i));
          const parameters = plan.slots.map(([row, column]) => rows[i + row]![column]);
          await trx.executeQuery(CompiledQuery.raw(plan.sql, parameters));
          i += plan.rows;
        }
      });
      return ids;
    },

    async list(accountId, query) {
      const limit = clampedLimit(query.limit);
      let q = db.selectFrom('requests').selectAll().where('account_id', '=', accountId);
      if (query.host !== undefined) q = q.where('host', '=', query.host.toLowerCase());
      if (query.tunnelId !== undefined) q = q.where('tunnel_id', '=', query.tunnelId);
      if (query.status !== undefined) q = q.where('status', '=', query.status);
      if (query.statusClass !== undefined) {
        const [from, to] = statusClassRange(query.statusClass);
        q = q.where('status', '>=', from).where('status', '<=', to);
      }
      if (query.method !== undefined) q = q.where('method', '=', query.method.toUpperCase());
      if (query.since !== undefined) q = q.where('timestamp', '>=', query.since);
      if (query.until !== undefined) q = q.where('timestamp', '<', query.until);
      const before = query.before;
      if (before !== undefined) q = q.where(keyBefore(before));
      const rows = await q.orderBy('timestamp', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(fromRow);
    },

    async prune({ olderThanMs, maxPerAccount }) {
      let deleted = 0;
      // Account by account: both limits doom a prefix of the account's (timestamp, id) order,
      // so one walk deletes through the newer of their ends.
      for await (const accountId of accountsWithRecords(db, 'requests')) {
        const pastCap = await newestAt(db, accountId, maxPerAccount, pruneChunkRows);
        const pastAge = await newestFirst(db, accountId).where('timestamp', '<', olderThanMs).executeTakeFirst();
        const last = newerKey(pastCap, pastAge);
        if (last) deleted += await deleteThrough(db, accountId, last, pruneChunkRows);
      }
      return deleted;
    },
  };
}
