import { endianness } from 'node:os';
import type { NewRequestPage } from '../schema.js';
import type { NewRequestRecord, RequestRecord } from './request-records.js';
import { idFromParts, newIdParts, newRequestId, NULL_TEXT, packRecords, PACKED_COLUMNS, type PackedBatch } from './request-rows.js';

// Inspector records on SQLite as pages: one row of `request_pages` holds one account's records
// of one batch. Why: a 13-column row per record cost the writer thread ~6 µs per proxied
// request (SQLite's per-row B-tree work is ~3 µs alone), the largest share of the edge's CPU
// the inspector takes; a page costs one row per batch. Like request-rows.ts, free of Kysely:
// the writer thread encodes pages with it.

/**
 * The page layout this code writes; stored in each page so a later layout can tell old pages
 * apart. Format 1 (before migration 020) had no `target`, its last column: its pages are still
 * read, as records without a target.
 */
export const PAGE_FORMAT = 2;
const WIDTH = PACKED_COLUMNS.length;
/** Values per record of each readable format. */
const WIDTH_OF_FORMAT: Readonly<Record<number, number>> = { 1: WIDTH - 1, 2: WIDTH };
const column = (name: (typeof PACKED_COLUMNS)[number]): number => PACKED_COLUMNS.indexOf(name);
const ACCOUNT = column('account_id');
const TUNNEL = column('tunnel_id');
const TIMESTAMP = column('timestamp');
const METHOD = column('method');
const PATH = column('path');
const STATUS = column('status');
const DURATION = column('duration_ms');
const BYTES = column('bytes');
const IP = column('ip');
const USER_AGENT = column('user_agent');
const PROTO = column('proto');
const HOST = column('host');
const TARGET = column('target');
const TEXT_COLUMNS = [ACCOUNT, TUNNEL, METHOD, PATH, IP, USER_AGENT, PROTO, HOST, TARGET];
const NUMBER_COLUMNS = [TIMESTAMP, STATUS, DURATION, BYTES];
/** An id this layout can store: `req_`, the ms of its timestamp, then its sequence number and random bits. */
const STORABLE_ID = /^req_[0-9a-f]{12}([0-9a-f]{8})([0-9a-f]{8})$/;

export type { NewRequestPage };

// Pages store the values' bytes as the host lays them out; every platform Node ships for
// production (x64, arm64) is little-endian. A big-endian host refuses rather than misreads.
function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new Error('inspector pages are stored little-endian; this host is big-endian');
}

/**
 * The pages of a batch as the writer stores them, one per account in the order accounts first
 * appear; records keep the batch's order within a page, with the ids `idParts` gives them
 * (newIdParts). Throws, so the whole batch is refused, when a record lacks a field the table
 * requires or the id parts do not fit the batch.
 */
export function pagesFromBatch(batch: PackedBatch, idParts: Uint32Array): NewRequestPage[] {
  assertLittleEndian();
  const { strings, values } = batch;
  const count = Math.floor(values.length / WIDTH);
  if (idParts.length !== 2 * count) throw new TypeError(`inspector batch of ${count} records came with ${idParts.length} id parts`);
  checkRecords(batch, count);
  // The common case, one account per batch, stores the batch as it came.
  const firstAccount = values[ACCOUNT];
  let oneAccount = true;
  for (let row = 1; row < count && oneAccount; row++) oneAccount = values[row * WIDTH + ACCOUNT] === firstAccount;
  if (oneAccount) return [encodePage(strings, values, idParts)];
  const rowsByAccount = new Map<number, number[]>();
  for (let row = 0; row < count; row++) {
    const account = values[row * WIDTH + ACCOUNT]!;
    const rows = rowsByAccount.get(account);
    if (rows) rows.push(row);
    else rowsByAccount.set(account, [row]);
  }
  return [...rowsByAccount.values()].map((rows) => {
    const local = extractRows(batch, rows);
    const parts = new Uint32Array(2 * rows.length);
    for (const [i, row] of rows.entries()) parts.set(idParts.subarray(2 * row, 2 * row + 2), 2 * i);
    return encodePage(local.strings, local.values, parts);
  });
}

/**
 * A page of records that already have ids (retention rewriting a page, migrations converting
 * rows). Every id this code ever made has the stored layout; one that does not is refused.
 */
export function pageFromRecords(records: readonly RequestRecord[]): NewRequestPage {
  assertLittleEndian();
  if (records.length === 0) throw new Error('an inspector page holds at least one record');
  const { strings, values } = packRecords(records);
  const idParts = new Uint32Array(2 * records.length);
  for (const [row, { id, timestamp }] of records.entries()) {
    const parts = STORABLE_ID.exec(id);
    if (!parts || newRequestId(timestamp, parts[1]! + parts[2]!) !== id)
      throw new Error(`inspector record id ${id} does not match its timestamp ${timestamp}`);
    idParts[2 * row] = parseInt(parts[1]!, 16);
    idParts[2 * row + 1] = parseInt(parts[2]!, 16);
  }
  return encodePage(strings, values, idParts);
}

/**
 * Refuses a batch with a missing text or a non-finite number. packRecords gives every text
 * column an index into `strings` (NULL_TEXT only for a missing tunnel or target), so a missing text is
 * a non-string in `strings`: checked once per distinct string, not per record.
 */
function checkRecords({ strings, values }: PackedBatch, count: number): void {
  const missing = strings.findIndex((value) => typeof value !== 'string');
  for (let row = 0; row < count; row++) {
    const base = row * WIDTH;
    if (missing >= 0) {
      const at = TEXT_COLUMNS.find((column) => values[base + column] === missing);
      if (at !== undefined) throw new TypeError(`inspector record ${row} has no ${PACKED_COLUMNS[at]}`);
    }
    for (const at of NUMBER_COLUMNS) {
      if (!Number.isFinite(values[base + at])) throw new TypeError(`inspector record ${row} has no numeric ${PACKED_COLUMNS[at]}`);
    }
  }
}

/** The given rows of a batch as a batch of their own, with only the strings they use. */
function extractRows({ strings, values }: PackedBatch, rows: readonly number[]): PackedBatch {
  const local = new Float64Array(rows.length * WIDTH);
  const localStrings: string[] = [];
  const remap = new Map<number, number>();
  for (const [i, row] of rows.entries()) {
    local.set(values.subarray(row * WIDTH, row * WIDTH + WIDTH), i * WIDTH);
    for (const at of TEXT_COLUMNS) {
      const index = local[i * WIDTH + at]!;
      if (index === NULL_TEXT) continue;
      let mapped = remap.get(index);
      if (mapped === undefined) remap.set(index, (mapped = localStrings.push(strings[index]!) - 1));
      local[i * WIDTH + at] = mapped;
    }
  }
  return { strings: localStrings, values: local };
}

function encodePage(strings: readonly string[], values: Float64Array, idParts: Uint32Array): NewRequestPage {
  const count = idParts.length / 2;
  // The newest record: by timestamp, then by id, whose order within a millisecond is the
  // order of (sequence, random) as numbers (fixed-width hex of each).
  let newest = 0;
  let oldestTs = Infinity;
  for (let row = 0; row < count; row++) {
    const ts = values[row * WIDTH + TIMESTAMP]!;
    if (ts < oldestTs) oldestTs = ts;
    const newestTs = values[newest * WIDTH + TIMESTAMP]!;
    if (ts < newestTs || row === newest) continue;
    const sequence = idParts[2 * row]!;
    const newestSequence = idParts[2 * newest]!;
    if (ts > newestTs || sequence > newestSequence || (sequence === newestSequence && idParts[2 * row + 1]! > idParts[2 * newest + 1]!))
      newest = row;
  }
  const newestTs = values[newest * WIDTH + TIMESTAMP]!;
  return {
    account_id: strings[values[ACCOUNT]!]!,
    newest_ts: newestTs,
    newest_id: idFromParts(newestTs, idParts, newest),
    oldest_ts: oldestTs,
    record_count: count,
    format: PAGE_FORMAT,
    strings: JSON.stringify(strings),
    vals: bytesOf(values),
    id_parts: bytesOf(idParts),
  };
}

/** A typed array's bytes, without a copy. */
const bytesOf = (array: Float64Array | Uint32Array): Buffer => Buffer.from(array.buffer, array.byteOffset, array.byteLength);

/**
 * A typed array over stored bytes. Typed arrays need an offset aligned to their element size,
 * and a driver's Buffer may sit anywhere in its pool: then the bytes are copied.
 */
function viewOf<T>(
  bytes: Uint8Array,
  Type: { new (buffer: ArrayBuffer, offset: number, length: number): T; BYTES_PER_ELEMENT: number },
): T {
  const size = Type.BYTES_PER_ELEMENT;
  if (bytes.byteOffset % size === 0) return new Type(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength / size);
  return new Type(new Uint8Array(bytes).buffer, 0, bytes.byteLength / size);
}

/** The columns a reader decodes a stored page from. */
export const STORED_PAGE_COLUMNS = ['record_count', 'format', 'strings', 'vals', 'id_parts'] as const;
/** What a reader needs of a stored page. */
export type StoredPage = Pick<NewRequestPage, (typeof STORED_PAGE_COLUMNS)[number]>;

/** A stored page, decoded for reading: records by index, built only when asked for. */
export class DecodedPage {
  readonly count: number;
  private readonly strings: string[];
  private readonly values: Float64Array;
  private readonly idParts: Uint32Array;
  /** Values per record: this page's format's. */
  private readonly width: number;

  constructor(page: StoredPage) {
    assertLittleEndian();
    const width = WIDTH_OF_FORMAT[page.format];
    if (width === undefined) throw new Error(`inspector page format ${page.format} is not readable by this version`);
    this.width = width;
    this.count = page.record_count;
    this.strings = JSON.parse(page.strings) as string[];
    this.values = viewOf(page.vals, Float64Array);
    this.idParts = viewOf(page.id_parts, Uint32Array);
    if (this.values.length !== this.count * width || this.idParts.length !== 2 * this.count) {
      throw new Error(`inspector page holds ${this.values.length} values and ${this.idParts.length} id parts for ${this.count} records`);
    }
  }

  timestamp(row: number): number {
    return this.values[row * this.width + TIMESTAMP]!;
  }

  id(row: number): string {
    return idFromParts(this.timestamp(row), this.idParts, row);
  }

  /** The index in this page's strings of `value`, -1 when no record has it in any text column. */
  stringIndex(value: string): number {
    return this.strings.indexOf(value);
  }

  /** The string index a text column holds for a record (NULL_TEXT for NULL). */
  textAt(row: number, name: 'tunnel_id' | 'method' | 'host'): number {
    return this.values[row * this.width + TEXT_AT[name]]!;
  }

  status(row: number): number {
    return this.values[row * this.width + STATUS]!;
  }

  record(row: number): RequestRecord {
    const base = row * this.width;
    const text = (at: number): string => this.strings[this.values[base + at]!]!;
    const tunnel = this.values[base + TUNNEL]!;
    const record: RequestRecord = {
      id: this.id(row),
      accountId: text(ACCOUNT),
      tunnelId: tunnel === NULL_TEXT ? undefined : text(TUNNEL),
      timestamp: this.values[base + TIMESTAMP]!,
      method: text(METHOD),
      path: text(PATH),
      status: this.values[base + STATUS]!,
      durationMs: this.values[base + DURATION]!,
      bytes: this.values[base + BYTES]!,
      ip: text(IP),
      userAgent: text(USER_AGENT),
      proto: text(PROTO),
      host: text(HOST),
    };
    // Format 1 pages end before the target; a NULL one is left out, as fromRow does.
    if (this.width > TARGET && this.values[base + TARGET] !== NULL_TEXT) record.target = text(TARGET);
    return record;
  }

  records(): RequestRecord[] {
    return Array.from({ length: this.count }, (_, row) => this.record(row));
  }
}

const TEXT_AT = { tunnel_id: TUNNEL, method: METHOD, host: HOST };

/** Pages of new records, as insertBatch stores them when no writer thread is used; ids from `idParts` (default new ones). */
export function pagesFromRecords(records: readonly NewRequestRecord[], idParts = newIdParts(records.length)): NewRequestPage[] {
  return pagesFromBatch(packRecords(records), idParts);
}
