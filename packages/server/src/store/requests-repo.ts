import { randomBytes } from 'node:crypto';
import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import { MAX_REQUEST_PAGE, type NewRequestRecord, type RequestRecord, type RequestRepo } from './request-records.js';
import type { Database, RequestsTable } from './schema.js';

/** Most rows per INSERT: 13 parameters each stays far below SQLite's and PostgreSQL's limits. */
const INSERT_CHUNK_ROWS = 256;
/** Every column, checked by the compiler: a column added to the table must be listed here. */
const COLUMN_SET: Record<keyof RequestsTable, true> = {
  id: true, account_id: true, tunnel_id: true, timestamp: true, method: true, path: true, status: true,
  duration_ms: true, bytes: true, ip: true, user_agent: true, proto: true, host: true,
};
/** Columns in the order the parameter slots of a cached INSERT refer to them. */
const COLUMNS = Object.keys(COLUMN_SET) as Array<keyof RequestsTable>;
/** Milliseconds fit 12 hex digits until the year 10889, so a fixed width sorts as text. */
const TIMESTAMP_HEX_DIGITS = 12;

/**
 * A request id `req_<12 hex ms><16 hex random>`: ids sort in time order as text on both
 * engines (hex digits sort before letters in every collation we meet), and records of the
 * same millisecond are told apart by 64 random bits.
 */
export function newRequestId(timestampMs: number, randomHex = randomBytes(8).toString('hex')): string {
  const ms = Math.max(0, Math.floor(timestampMs)).toString(16).padStart(TIMESTAMP_HEX_DIGITS, '0');
  return `req_${ms}${randomHex}`;
}

/** Rows with ids; the random bits of a whole batch come from one call (a call per row cost ~4 µs). */
function toRows(records: readonly NewRequestRecord[]): RequestsTable[] {
  const random = randomBytes(8 * records.length).toString('hex');
  return records.map((record, i) => toRow(record, newRequestId(record.timestamp, random.slice(16 * i, 16 * i + 16))));
}

function toRow(record: NewRequestRecord, id: string): RequestsTable {
  return {
    id,
    account_id: record.accountId,
    tunnel_id: record.tunnelId ?? null,
    timestamp: Math.floor(record.timestamp),
    method: record.method,
    path: record.path,
    status: record.status,
    duration_ms: Math.max(0, Math.round(record.durationMs)),
    bytes: record.bytes,
    ip: record.ip,
    user_agent: record.userAgent,
    proto: record.proto,
    host: record.host.toLowerCase(),
  };
}

function fromRow(row: Selectable<RequestsTable>): RequestRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    tunnelId: row.tunnel_id ?? undefined,
    timestamp: row.timestamp,
    method: row.method,
    path: row.path,
    status: row.status,
    durationMs: row.duration_ms,
    bytes: row.bytes,
    ip: row.ip,
    userAgent: row.user_agent,
    proto: row.proto,
    host: row.host,
  };
}

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
 * Runs one statement per parameter list, synchronously, on the connection of the Kysely
 * transaction it is called in; throws on the first failure.
 */
export type RunEach = (sql: string, parameterLists: readonly (readonly unknown[])[]) => void;

export interface RequestRepoOptions {
  /**
   * Given by open-store for SQLite: insertBatch then runs a single-row INSERT per record,
   * bypassing Kysely's per-query path. Without it (PostgreSQL), multi-row INSERTs through
   * Kysely save round trips.
   */
  runEach?: RunEach | undefined;
}

/** The inspector records repo over a Kysely database (either engine). */
export function createRequestRepo(db: Kysely<Database>, options: RequestRepoOptions = {}): RequestRepo {
  const { runEach } = options;
  // Building and compiling a Kysely INSERT cost about 5 µs per row, paid again at every flush;
  // the SQL of n rows never changes, so it is compiled once per shape. Sentinel values tell
  // which row and column each parameter is, whatever the engine's placeholders and ordering.
  const plans = new Map<number, InsertPlan>();
  const planFor = (rows: number): InsertPlan => {
    let plan = plans.get(rows);
    if (plan) return plan;
    const sentinels = Array.from({ length: rows }, (_, r) => Object.fromEntries(COLUMNS.map((c, k) => [c, `${r}:${k}`])));
    const compiled = db.insertInto('requests').values(sentinels as unknown as RequestsTable[]).compile();
    const slots = compiled.parameters.map((p): [number, keyof RequestsTable] => {
      const [r, k] = String(p).split(':').map(Number);
      return [r!, COLUMNS[k!]!];
    });
    plan = { rows, sql: compiled.sql, slots };
    plans.set(rows, plan);
    return plan;
  };
  return {
    async insertBatch(records) {
      if (records.length === 0) return;
      const rows = toRows(records);
      // One transaction per batch: one fsync for the whole batch, and all or nothing.
      await db.transaction().execute(async (trx) => {
        if (runEach) {
          // Measured through openStore (20 batches of 500): 256-row INSERTs via Kysely ~12 µs per
          // row uncached, ~11 µs with cached statements; one cached single-row INSERT run per
          // record here ~8.5-10 µs. SQLite's multi-row VALUES costs more per row than binding
          // 13 values anew, and Kysely's async path costs ~4 µs per query, so neither pays.
          const { sql, slots } = planFor(1);
          runEach(sql, rows.map((row) => slots.map(([, column]) => row[column])));
          return;
        }
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
      const aged = await db.deleteFrom('requests').where('timestamp', '<', olderThanMs).executeTakeFirst();
      let deleted = Number(aged.numDeletedRows);
      const crowded = await db
        .selectFrom('requests')
        .select('account_id')
        .groupBy('account_id')
        .having((eb) => eb.fn.countAll(), '>', maxPerAccount)
        .execute();
      for (const { account_id: accountId } of crowded) {
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
        const result = await db
          .deleteFrom('requests')
          .where('account_id', '=', accountId)
          .where((eb) =>
            eb.or([eb('timestamp', '<', cut.timestamp), eb.and([eb('timestamp', '=', cut.timestamp), eb('id', '<=', cut.id)])]),
          )
          .executeTakeFirst();
        deleted += Number(result.numDeletedRows);
      }
      return deleted;
    },
  };
}
