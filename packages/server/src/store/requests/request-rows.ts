import { randomBytes, randomFillSync } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { NewRequestRecord, RequestRecord } from './request-records.js';
import type { RequestsTable } from '../schema.js';

// Inspector records <-> `requests` rows (PostgreSQL, and migrations), the packed batches the
// SQLite writer thread receives, and record ids. Kept apart from the repos (and free of runtime
// imports beyond node:crypto) because the writer thread uses it and should not load Kysely.

/** Every column, checked by the compiler: a column added to the table must be listed here. */
const EVERY_COLUMN: Record<keyof RequestsTable, true> = {
  id: true,
  account_id: true,
  tunnel_id: true,
  timestamp: true,
  method: true,
  path: true,
  status: true,
  duration_ms: true,
  bytes: true,
  ip: true,
  user_agent: true,
  proto: true,
  host: true,
  target: true,
};
/** Every column of `requests`, in one fixed order (the order compiled INSERTs refer to them by). */
export const REQUEST_COLUMNS = Object.keys(EVERY_COLUMN) as Array<keyof RequestsTable>;
/** Milliseconds fit 12 hex digits until the year 10889, so a fixed width sorts as text. */
const TIMESTAMP_HEX_DIGITS = 12;

/**
 * A request id `req_<12 hex ms><16 hex suffix>`: ids sort in time order as text on both
 * engines (hex digits sort before letters in every collation we meet). The suffix (idSuffixes)
 * keeps records of the same millisecond in the order they arrived and apart from other threads'.
 */
export function newRequestId(timestampMs: number, suffix: string): string {
  const ms = Math.max(0, Math.floor(timestampMs));
  // Records in a row mostly share their millisecond (the live feed makes an id per record).
  if (ms !== lastIdMs) {
    lastIdMs = ms;
    lastIdMsHex = ms.toString(16).padStart(TIMESTAMP_HEX_DIGITS, '0');
  }
  return `req_${lastIdMsHex}${suffix}`;
}

let lastIdMs = -1;
let lastIdMsHex = '';

/** Ids this thread has made, so far (wraps at 2^32; no millisecond holds that many records). */
let idSequence = 0;

/** Takes `count` consecutive id sequence numbers of this thread (modulo 2^32); returns the first. */
export function takeIdSequence(count: number): number {
  const first = idSequence;
  idSequence = (idSequence + count) >>> 0;
  return first;
}

/** The id suffix of a sequence number and 32 random bits: 8 hex digits each. */
export function idSuffix(sequence: number, random: number): string {
  return hex8(sequence) + hex8(random);
}

/** Two hex digits for each byte value. */
const HEX_BYTE = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * A uint32 as 8 hex digits, by table: Number#toString(16) takes a floating-point path for
 * numbers above 2^31, and the live feed makes two of these per record.
 */
export function hex8(value: number): string {
  return HEX_BYTE[value >>> 24]! + HEX_BYTE[(value >>> 16) & 255]! + HEX_BYTE[(value >>> 8) & 255]! + HEX_BYTE[value & 255]!;
}

/**
 * The id parts of `count` new records, [sequence, random] per record as two uint32 (see
 * idSuffix). Made before a batch is handed to the SQLite writer thread, so the main thread
 * knows the ids its records are stored under (the live feed publishes them) and the thread
 * only stores them.
 */
export function newIdParts(count: number): Uint32Array<ArrayBuffer> {
  // Random bits in every slot, then the sequence over the even ones.
  const idParts = randomFillSync(new Uint32Array(2 * count));
  const firstSequence = takeIdSequence(count);
  for (let row = 0; row < count; row++) idParts[2 * row] = (firstSequence + row) >>> 0;
  return idParts;
}

/** The id of record `row` of a batch, from its timestamp and the batch's id parts. */
export const idFromParts = (timestamp: number, idParts: Uint32Array, row: number): string =>
  newRequestId(timestamp, idSuffix(idParts[2 * row]!, idParts[2 * row + 1]!));

/**
 * `count` id suffixes of 16 hex digits: 8 of a per-thread sequence, then 8 random. With
 * random bits alone, two requests of the same millisecond listed newest first in either order
 * (a visitor's quick second request could come before the first); the sequence keeps arrival
 * order, and the 32 random bits keep other threads, processes and restarts apart. The random
 * bits of a whole batch come from one call (a call per row cost ~4 µs).
 */
function idSuffixes(count: number): string[] {
  const random = randomBytes(4 * count).toString('hex');
  const first = takeIdSequence(count);
  const suffixes = new Array<string>(count);
  for (let i = 0; i < count; i++) suffixes[i] = hex8((first + i) >>> 0) + random.slice(8 * i, 8 * i + 8);
  return suffixes;
}

/** Rows with ids, in the order given. */
export function toRows(records: readonly NewRequestRecord[]): RequestsTable[] {
  const suffixes = idSuffixes(records.length);
  return records.map((record, i) => toRow(record, newRequestId(record.timestamp, suffixes[i]!)));
}

/** Every column but `id` (the writer assigns ids), in the order packRecords writes them: one packed record. */
export const PACKED_COLUMNS: ReadonlyArray<keyof RequestsTable> = [
  'account_id',
  'tunnel_id',
  'timestamp',
  'method',
  'path',
  'status',
  'duration_ms',
  'bytes',
  'ip',
  'user_agent',
  'proto',
  'host',
  'target',
];
/** A text column's NULL in `values`. */
export const NULL_TEXT = -1;

/**
 * A batch of records as the main thread posts it to the SQLite writer thread: `values` holds
 * PACKED_COLUMNS.length numbers per record, normalised as in toRows, where a text column holds
 * its value's index in `strings` (NULL_TEXT for NULL). Each distinct string is in `strings`
 * once, and `values` moves to the thread without a copy (its buffer is transferred).
 *
 * Why: structured clone copies every string it meets, and a batch repeats the same account,
 * tunnel, host, method, client and user agent record after record. Measured on the main
 * thread's own CPU clock, packing and posting 256-record batches: ~0.4 µs per record, against
 * ~0.55 for one flat array of the values (posting objects, with their property names, cost
 * more still). CPU profiles under load show postMessage far costlier than that, but the
 * excess is the writer thread, just woken, preempting the main thread on its core: it is no
 * CPU of the main thread's (its per-thread CPU in /proc stayed the same).
 */
export interface PackedBatch {
  strings: string[];
  values: Float64Array<ArrayBuffer>;
}

/** Packs records for the writer thread (see PackedBatch). */
export function packRecords(records: readonly NewRequestRecord[]): PackedBatch {
  const values = new Float64Array(records.length * PACKED_COLUMNS.length);
  const strings: string[] = [];
  const indexes = new Map<string, number>();
  const text = (value: string): number => {
    let index = indexes.get(value);
    if (index === undefined) indexes.set(value, (index = strings.push(value) - 1));
    return index;
  };
  let at = 0;
  // Field by field in PACKED_COLUMNS order, normalised by the same helpers as toRow (the unit
  // tests hold the two to the same rows). Written out rather than looped over column names: a keyed load per
  // column of a row object made here cost about twice as much per record.
  for (const record of records) {
    values[at++] = text(record.accountId);
    values[at++] = record.tunnelId === undefined ? NULL_TEXT : text(record.tunnelId);
    values[at++] = storedTimestamp(record.timestamp);
    values[at++] = text(record.method);
    values[at++] = text(record.path);
    values[at++] = record.status;
    values[at++] = storedDuration(record.durationMs);
    values[at++] = record.bytes;
    values[at++] = text(record.ip);
    values[at++] = text(record.userAgent);
    values[at++] = text(record.proto);
    values[at++] = text(storedHost(record.host));
    values[at++] = record.target === undefined ? NULL_TEXT : text(record.target);
  }
  return { strings, values };
}

// How a record's fields are stored, for toRow and packRecords alike.
const storedTimestamp = (timestampMs: number): number => Math.floor(timestampMs);
const storedDuration = (durationMs: number): number => Math.max(0, Math.round(durationMs));
const storedHost = (host: string): string => host.toLowerCase();

/** A record as a `requests` row with the given id. */
export function toRow(record: NewRequestRecord, id: string): RequestsTable {
  return {
    id,
    account_id: record.accountId,
    tunnel_id: record.tunnelId ?? null,
    timestamp: storedTimestamp(record.timestamp),
    method: record.method,
    path: record.path,
    status: record.status,
    duration_ms: storedDuration(record.durationMs),
    bytes: record.bytes,
    ip: record.ip,
    user_agent: record.userAgent,
    proto: record.proto,
    host: storedHost(record.host),
    target: record.target ?? null,
  };
}

/** A new record as the store keeps it under `id` (normalised as toRow stores it), as list returns it. */
export function storedRecord(record: NewRequestRecord, id: string): RequestRecord {
  // fromRow(toRow(record, id)) without the row in between: the live stream builds one per
  // record under load. Keys in fromRow's order, so both make objects of one shape.
  return {
    id,
    accountId: record.accountId,
    tunnelId: record.tunnelId ?? undefined,
    timestamp: storedTimestamp(record.timestamp),
    method: record.method,
    path: record.path,
    status: record.status,
    durationMs: storedDuration(record.durationMs),
    bytes: record.bytes,
    ip: record.ip,
    userAgent: record.userAgent,
    proto: record.proto,
    host: storedHost(record.host),
    ...(record.target !== undefined ? { target: record.target } : {}),
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
    // Rows written before migration 020 have no target column at all.
    ...(row.target != null ? { target: row.target } : {}),
  };
}
