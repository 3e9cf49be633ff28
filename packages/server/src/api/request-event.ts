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
      // The hub calls every subscriber of a batch in one go: after that the texts are garbage,
      // and holding them until the next batch would make the young generation copy them.
      queueMicrotask(() => this.release(records));
    }
    return (this.texts[index] ??= requestEvent(records[index]!));
  }

  private release(records: readonly RequestRecord[]): void {
    if (this.batch !== records) return;
    this.batch = undefined;
    this.texts = [];
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
    `{"id":${str(r.id)},"tunnelId":${tunnelId === null ? 'null' : tunnelJson.of(tunnelId)},` +
    `"timestamp":"${isoTime(r.timestamp)}","method":${methodJson.of(r.method)},"path":${str(r.path)},` +
    `"status":${num(r.status)},"durationMs":${num(Math.round(r.durationMs))},"bytes":${num(Math.round(r.bytes))},` +
    `"ip":${ipJson.of(r.ip)},"userAgent":${userAgentJson.of(r.userAgent)},"proto":${protoJson.of(r.proto)},"host":${hostJson.of(r.host)},` +
    `"target":${r.target === undefined ? 'null' : str(r.target)}}`;
  return `event: request\nid: ${r.id}\ndata: ${data}\n\n`;
}

const str = JSON.stringify as (value: string) => string;

/** A number as JSON.stringify writes it (non-finite numbers become null). */
const num = (value: number): string => (Number.isFinite(value) ? String(value) : 'null');

/**
 * The JSON of one field's last value. Records in a row mostly share their client, host, method
 * and tunnel, so comparing with the previous record's value (a length check and a memcmp) skips
 * escaping the string again; a Map keyed by the strings would hash each one instead.
 */
class LastJson {
  private value = '';
  private json = '""';

  of(value: string): string {
    if (value !== this.value) {
      this.json = str(value);
      this.value = value;
    }
    return this.json;
  }
}

const methodJson = new LastJson();
const tunnelJson = new LastJson();
const ipJson = new LastJson();
const userAgentJson = new LastJson();
const protoJson = new LastJson();
const hostJson = new LastJson();

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
