// Traffic Inspector records as the store's contract shows them (the `requests` table).

/** A captured visitor request, before it has an id. */
export interface NewRequestRecord {
  accountId: string;
  /** The tunnel that served (or was offline for) the hostname; undefined when unknown. */
  tunnelId: string | undefined;
  /** When the request arrived at the edge, ms since the epoch. */
  timestamp: number;
  method: string;
  path: string;
  /** HTTP status returned to the visitor; 0 when none was (the visitor left first). */
  status: number;
  durationMs: number;
  /** Response body bytes sent to the visitor. */
  bytes: number;
  ip: string;
  userAgent: string;
  /** HTTP protocol version of the request, e.g. `HTTP/1.1`. */
  proto: string;
  /** The hostname requested, lower-cased. */
  host: string;
  /** `host:port` of the local service that served it, for a tunnel with routes; undefined otherwise. */
  target?: string | undefined;
}

/** A stored inspector record. Ids sort by time: `req_<12 hex ms><16 hex random>`. */
export interface RequestRecord extends NewRequestRecord {
  id: string;
}

/** Position of the last record of a page; the next page holds strictly older records. */
export interface RequestCursor {
  timestamp: number;
  id: string;
}

/** True when record key `a` comes after `b` in (timestamp, id) order. */
export function isAfter(a: RequestCursor, b: RequestCursor): boolean {
  return a.timestamp > b.timestamp || (a.timestamp === b.timestamp && a.id > b.id);
}

/** The newer of two keys (either may be missing). */
export function newerKey(a: RequestCursor | undefined, b: RequestCursor | undefined): RequestCursor | undefined {
  if (!a || !b) return a ?? b;
  return isAfter(a, b) ? a : b;
}

/** Filters of RequestRepo.list; all optional except `limit`. */
export interface RequestQuery {
  host?: string | undefined;
  tunnelId?: string | undefined;
  status?: number | undefined;
  /** Only statuses of this class: 4 is 400-499. */
  statusClass?: number | undefined;
  /** Upper-cased before comparing. */
  method?: string | undefined;
  /** Only records with timestamp >= since (ms). */
  since?: number | undefined;
  /** Only records with timestamp < until (ms). */
  until?: number | undefined;
  /** Records returned at most; clamped to 1..MAX_REQUEST_LIST. */
  limit: number;
  /** Only records strictly older than this cursor, in (timestamp, id) order. */
  before?: RequestCursor | undefined;
}

/** Largest page of records a reader is given. */
export const MAX_REQUEST_PAGE = 1000;
/**
 * Most records RequestRepo.list returns: the largest page and one more, which tells a reader
 * whether another page exists. A list capped at the page itself never let a full page of the
 * largest size say so (GET /v1/requests?limit=1000 answered no cursor while more existed).
 */
export const MAX_REQUEST_LIST = MAX_REQUEST_PAGE + 1;

/** A query's `limit` as RequestRepo.list applies it: an integer in 1..MAX_REQUEST_LIST. */
export function clampedLimit(limit: number): number {
  return Math.max(1, Math.min(MAX_REQUEST_LIST, Math.floor(limit) || 1));
}

/** The statuses of class `statusClass` (4: 400-499), as a range [from, to]. */
export function statusClassRange(statusClass: number): [from: number, to: number] {
  return [statusClass * 100, statusClass * 100 + 99];
}

/** The ids a batch's records were stored under, by their index in the batch; each built when asked for. */
export interface StoredIds {
  idAt(index: number): string;
}

export interface RequestRepo {
  /**
   * Inserts the records in ONE transaction: all or none. Ids are assigned from each timestamp;
   * the answer names them, so a caller can tell others what was stored without reading it back.
   */
  insertBatch(records: readonly NewRequestRecord[]): Promise<StoredIds>;
  /** The account's records matching the filters, newest first (timestamp desc, id desc). */
  list(accountId: string, query: RequestQuery): Promise<RequestRecord[]>;
  /**
   * Deletes records with timestamp < olderThanMs (an absolute ms cutoff), then each
   * account's oldest records beyond its newest maxPerAccount. Returns how many were deleted.
   */
  prune(options: { olderThanMs: number; maxPerAccount: number }): Promise<number>;
}

/**
 * Writes whole batches somewhere other than the repo's Kysely connection; all or nothing per
 * batch. `idParts` are the records' ids as request-rows.ts newIdParts draws them.
 */
export interface RequestBatchWriter {
  write(records: readonly NewRequestRecord[], idParts: Uint32Array): Promise<void>;
}
