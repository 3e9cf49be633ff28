import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { MAX_REQUEST_PAGE, type NewRequestRecord, type RequestRecord, type RequestRepo } from './request-records.js';
import type { Database, RequestsTable } from './schema.js';

/** Rows per INSERT: 13 parameters each stays far below SQLite's and PostgreSQL's limits. */
const INSERT_CHUNK_ROWS = 200;
/** Milliseconds fit 12 hex digits until the year 10889, so a fixed width sorts as text. */
const TIMESTAMP_HEX_DIGITS = 12;

/**
 * A request id `req_<12 hex ms><16 hex random>`: ids sort in time order as text on both
 * engines (hex digits sort before letters in every collation we meet), and records of the
 * same millisecond are told apart by 64 random bits.
 */
export function newRequestId(timestampMs: number): string {
  const ms = Math.max(0, Math.floor(timestampMs)).toString(16).padStart(TIMESTAMP_HEX_DIGITS, '0');
  return `req_${ms}${randomBytes(8).toString('hex')}`;
}

function toRow(record: NewRequestRecord): RequestsTable {
  return {
    id: newRequestId(record.timestamp),
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

/** The inspector records repo over a Kysely database (either engine). */
export function createRequestRepo(db: Kysely<Database>): RequestRepo {
  return {
    async insertBatch(records) {
      if (records.length === 0) return;
      const rows = records.map(toRow);
      // One transaction per batch: one fsync for the whole batch, and all or nothing.
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < rows.length; i += INSERT_CHUNK_ROWS) {
          await trx.insertInto('requests').values(rows.slice(i, i + INSERT_CHUNK_ROWS)).execute();
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
