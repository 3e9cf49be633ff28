import { CompiledQuery, type Kysely, type SelectQueryBuilder } from 'kysely';
import { MAX_REQUEST_PAGE, type NewRequestRecord, type RequestRepo } from './request-records.js';
import { fromRow, REQUEST_COLUMNS, toRows } from './request-rows.js';
import type { Database, RequestsTable } from './schema.js';

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
  const compiled = db.insertInto('requests').values(sentinels as unknown as RequestsTable[]).compile();
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
 * (3.1 in chunks of 500, 3.3 in one statement), the loop never held more than ~30 ms.
 */
export const PRUNE_CHUNK_ROWS = 2000;

type IdQuery = SelectQueryBuilder<Database, 'requests', { id: string }>;

/** Deletes the rows `where` selects, `rowsPerChunk` per statement, yielding between; returns how many. */
async function deleteInChunks(db: Kysely<Database>, rowsPerChunk: number, where: (ids: IdQuery) => IdQuery): Promise<number> {
  let total = 0;
  for (;;) {
    // Oldest first: the walk starts where the doomed rows are, not behind the kept ones
    // (without it each chunk of a crowded account stepped over its 100,000 newest rows).
    const chunk = where(db.selectFrom('requests').select('id')).orderBy('timestamp').orderBy('id').limit(rowsPerChunk);
    const result = await db.deleteFrom('requests').where('id', 'in', chunk).executeTakeFirst();
    const n = Number(result.numDeletedRows);
    total += n;
    if (n < rowsPerChunk) return total;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** A single-row INSERT: its SQL, and the column each parameter slot takes, in order. */
export interface SingleRowInsert {
  sql: string;
  columns: Array<keyof RequestsTable>;
}

/** The single-row INSERT in this engine's SQL, for a writer that runs it outside Kysely. */
export function singleRowInsert(db: Kysely<Database>): SingleRowInsert {
  const { sql, slots } = compileInsertPlan(db, 1);
  return { sql, columns: slots.map(([, column]) => column) };
}

/** Writes whole batches somewhere other than the repo's Kysely connection; all or nothing per batch. */
export interface RequestBatchWriter {
  write(records: readonly NewRequestRecord[]): Promise<void>;
}

export interface RequestRepoOptions {
  /**
   * Given by open-store for SQLite: insertBatch hands every batch to it (a worker thread with
   * its own connection, so the synchronous inserts leave the event loop). Without it
   * (PostgreSQL, whose driver is asynchronous), multi-row INSERTs through Kysely save round trips.
   */
  writer?: RequestBatchWriter | undefined;
  /** Rows per retention DELETE (default PRUNE_CHUNK_ROWS); tests make it small. */
  pruneChunkRows?: number;
}

/** The inspector records repo over a Kysely database (either engine). */
export function createRequestRepo(db: Kysely<Database>, options: RequestRepoOptions = {}): RequestRepo {
  const { writer, pruneChunkRows = PRUNE_CHUNK_ROWS } = options;
  const plans = new Map<number, InsertPlan>();
  const planFor = (rows: number): InsertPlan => {
    let plan = plans.get(rows);
    if (!plan) plans.set(rows, (plan = compileInsertPlan(db, rows)));
    return plan;
  };
  return {
    async insertBatch(records) {
      if (records.length === 0) return;
      if (writer) return writer.write(records);
      const rows = toRows(records);
      // One transaction per batch: one fsync for the whole batch, and all or nothing.
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; ) {
          const plan = planFor(chunkRows(rows.length - i));
          const parameters = plan.slots.map(([row, column]) => rows[i + row]![column]);
          await trx.executeQuery(CompiledQuery.raw(plan.sql, parameters));
          i += plan.rows;
        }
      });
    },

    async list(accountId, query) {
      const limit = Math.max(1, Math.min(MAX_REQUEST_PAGE, Math.floor(query.limit) || 1));
      let q = db.selectFrom('requests').selectAll().where('account_id', '=', accountId);
      if (query.host !== undefined) q = q.where('host', '=', query.host.toLowerCase());
      if (query.tunnelId !== undefined) q = q.where('tunnel_id', '=', query.tunnelId);
      if (query.status !== undefined) q = q.where('status', '=', query.status);
      if (query.method !== undefined) q = q.where('method', '=', query.method.toUpperCase());
      if (query.since !== undefined) q = q.where('timestamp', '>=', query.since);
      if (query.until !== undefined) q = q.where('timestamp', '<', query.until);
      const before = query.before;
      if (before !== undefined) {
        q = q.where((eb) =>
          eb.or([
            eb('timestamp', '<', before.timestamp),
            eb.and([eb('timestamp', '=', before.timestamp), eb('id', '<', before.id)]),
          ]),
        );
      }
      const rows = await q.orderBy('timestamp', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(fromRow);
    },

    async prune({ olderThanMs, maxPerAccount }) {
      let deleted = await deleteInChunks(db, pruneChunkRows, (ids) => ids.where('timestamp', '<', olderThanMs));
      // Account by account, each an index walk of at most maxPerAccount entries: a GROUP BY
      // over the whole table to find crowded accounts cost a scan of every row, in one statement.
      const accounts = await db.selectFrom('accounts').select('id').execute();
      for (const { id: accountId } of accounts) {
        // The newest record past the cap; it and everything older goes (index order).
        const cut = await db
          .selectFrom('requests')
          .select(['timestamp', 'id'])
          .where('account_id', '=', accountId)
          .orderBy('timestamp', 'desc')
          .orderBy('id', 'desc')
          .limit(1)
          .offset(maxPerAccount)
          .executeTakeFirst();
        if (!cut) continue;
        deleted += await deleteInChunks(db, pruneChunkRows, (ids) =>
          ids
            .where('account_id', '=', accountId)
            .where((eb) => eb.or([eb('timestamp', '<', cut.timestamp), eb.and([eb('timestamp', '=', cut.timestamp), eb('id', '<=', cut.id)])])),
        );
      }
      return deleted;
    },
  };
}
