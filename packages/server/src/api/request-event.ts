import type { RequestRecord } from '../store/index.js';

/**
 * The `request` events of GET /v1/requests/stream, encoded once per published batch for all
 * subscribers of its account. The inspector's hub hands every subscriber of an account the same
 * list of record objects, so the last list seen and its encoded events are kept here: the first
 * subscriber encodes a record, the others reuse the text. (A WeakMap per record cost more in
 * the garbage collector than the encoding it saved.)
 */
export class RequestEvents {
  private batch: readonly RequestRecord[] | undefined;
  private texts: Array<string | undefined> = [];

  /** The event of `records[index]`, `records` being a list the hub published. */
  at(records: readonly RequestRecord[], index: number): string {
    if (records !== this.batch) {
      this.batch = records;
      this.texts = new Array<string | undefined>(records.length);
    }
    return (this.texts[index] ??= requestEvent(records[index]!));
  }
}

/**
 * One record's event: the same text as `event: request`, `id:` and
 * `data: JSON.stringify(capturedRequestItem(record))`, written field by field without the
 * intermediate object (request-event.test.ts holds the two equal).
 */
export function requestEvent(r: RequestRecord): string {
  const tunnelId = r.tunnelId ?? null;
  // Keys in capturedRequestItem's order (request-filters.ts).
  const data =
    `{"id":${str(r.id)},"tunnelId":${tunnelId === null ? 'null' : same(tunnelId)},` +
    `"timestamp":"${isoTime(r.timestamp)}","method":${same(r.method)},"path":${str(r.path)},` +
    `"status":${num(r.status)},"durationMs":${num(Math.round(r.durationMs))},"bytes":${num(Math.round(r.bytes))},` +
    `"ip":${same(r.ip)},"userAgent":${same(r.userAgent)},"proto":${same(r.proto)},"host":${same(r.host)}}`;
  return `event: request\nid: ${r.id}\ndata: ${data}\n\n`;
}

const str = JSON.stringify as (value: string) => string;

/** A number as JSON.stringify writes it (non-finite numbers become null). */
const num = (value: number): string => (Number.isFinite(value) ? String(value) : 'null');

// Records in a row mostly share their client, host, method and millisecond: the last string
// of each kind and its JSON are kept, so a burst of requests is not escaped again and again.
const lastJson = new Map<string, string>();
const LAST_JSON_MAX = 64;
/** Longer strings (a user agent can fill a header) are escaped each time: the cache stays small. */
const CACHED_MAX_LENGTH = 256;

/** JSON of a string that repeats from record to record (a small cache, cleared when full). */
function same(value: string): string {
  if (value.length > CACHED_MAX_LENGTH) return str(value);
  let json = lastJson.get(value);
  if (json === undefined) {
    if (lastJson.size >= LAST_JSON_MAX) lastJson.clear();
    lastJson.set(value, (json = str(value)));
  }
  return json;
}

let lastTimestamp = Number.NaN;
let lastIso = '';

/** toISOString of a record's timestamp (a RangeError for an invalid one, as capturedRequestItem). */
function isoTime(timestamp: number): string {
  if (timestamp !== lastTimestamp) {
    lastIso = new Date(timestamp).toISOString();
    lastTimestamp = timestamp;
  }
  return lastIso;
}
