import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { NewRequestRecord, RequestRecord } from './request-records.js';
import type { RequestsTable } from './schema.js';

// Inspector records <-> `requests` rows. Kept apart from the repo (and free of runtime
// imports beyond node:crypto) because the SQLite writer thread converts rows too, and
// should not load Kysely to do it.

/** Every column, checked by the compiler: a column added to the table must be listed here. */
const COLUMN_SET: Record<keyof RequestsTable, true> = {
  id: true, account_id: true, tunnel_id: true, timestamp: true, method: true, path: true, status: true,
  duration_ms: true, bytes: true, ip: true, user_agent: true, proto: true, host: true,
};
/** Every column of `requests`, in one fixed order (the order compiled INSERTs refer to them by). */
export const REQUEST_COLUMNS = Object.keys(COLUMN_SET) as Array<keyof RequestsTable>;
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
export function toRows(records: readonly NewRequestRecord[]): RequestsTable[] {
  const random = randomBytes(8 * records.length).toString('hex');
  return records.map((record, i) => toRow(record, newRequestId(record.timestamp, random.slice(16 * i, 16 * i + 16))));
}

/** Every column but `id` (the writer assigns ids), in REQUEST_COLUMNS order: one packed record. */
export const PACKED_COLUMNS: ReadonlyArray<keyof RequestsTable> = REQUEST_COLUMNS.filter((column) => column !== 'id');
const PACKED_TIMESTAMP = PACKED_COLUMNS.indexOf('timestamp');

/**
 * Records as ONE flat array of column values, PACKED_COLUMNS.length per record, normalised as
 * in toRows. It is what the main thread posts to the SQLite writer thread: cloning an array of
 * primitives skips the 12 property names per record that cloning objects writes, and the
 * thread re-interns (measured under the benchmark's small GET: the writer thread fell from
 * 8.7 to 7.5 µs per request, the edge's main thread by ~1 µs).
 */
export function packRecords(records: readonly NewRequestRecord[]): unknown[] {
  const packed: unknown[] = [];
  for (const record of records) {
    const row = toRow(record, '');
    for (const column of PACKED_COLUMNS) packed.push(row[column]);
  }
  return packed;
}

/**
 * Calls `insert` once per packed record with that row's parameters in `columns` order (the
 * slots of a compiled single-row INSERT), `id` assigned from the record's timestamp. The
 * parameter array is reused between calls: `insert` must bind it before returning.
 */
export function forEachPackedRow(packed: readonly unknown[], columns: ReadonlyArray<keyof RequestsTable>, insert: (parameters: unknown[]) => void): number {
  const width = PACKED_COLUMNS.length;
  const count = Math.floor(packed.length / width);
  const sources = columns.map((column) => PACKED_COLUMNS.indexOf(column));
  const random = randomBytes(8 * count).toString('hex');
  const parameters = new Array<unknown>(columns.length);
  for (let row = 0; row < count; row++) {
    const base = row * width;
    for (let slot = 0; slot < sources.length; slot++) {
      const source = sources[slot]!;
      parameters[slot] = source >= 0 ? packed[base + source] : newRequestId(packed[base + PACKED_TIMESTAMP] as number, random.slice(16 * row, 16 * row + 16));
    }
    insert(parameters);
  }
  return count;
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

export function fromRow(row: Selectable<RequestsTable>): RequestRecord {
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
