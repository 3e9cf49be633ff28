import type { RequestHead } from '@svcrouter/protocol';
import type { RequestLog } from './request-log.js';

/** A body as captured: at most the inspector's limit, with the size seen and whether it was cut. */
export interface CapturedBody {
  /** Bytes seen in all. */
  size: number;
  /** True when `base64` holds only the first maxBodyBytes of them. */
  truncated: boolean;
  /** The kept bytes, base64-encoded (bodies may be binary). */
  base64: string;
}

/** One side of an exchange: headers in their order as [name, value] pairs, and the body. */
export interface CapturedMessage {
  headers: Array<[string, string]>;
  body: CapturedBody;
}

/** One request and its response, as the inspector keeps it. */
export interface InspectedRequest {
  id: string;
  /** Public URL of the tunnel it came through. */
  tunnel: string;
  /** `host:port` of the local service that served it: the tunnel's own, or a route's. */
  target?: string;
  /** The id of the request this one replays. */
  replayOf?: string;
  /** When it arrived, ISO 8601. */
  startedAt: string;
  method: string;
  path: string;
  /** Response status; 502 when the local service could not be reached, 499 when the visitor left. */
  status: number;
  durationMs: number;
  request: CapturedMessage;
  /** Undefined when the local service never answered. */
  response?: CapturedMessage;
}

/** Receives one exchange's bytes as they pass; it must copy what it keeps and never throw. */
export interface ExchangeTap {
  requestBody(chunk: Buffer): void;
  response(status: number, headers: string[]): void;
  responseBody(chunk: Buffer): void;
  /** The exchange is over (once). */
  done(log: RequestLog): void;
}

/**
 * Collects a body up to `limit` bytes. A piece is kept by reference when the memory it pins
 * (its whole backing buffer: chunks are fresh socket reads, never reused) stays within the
 * limit with the others kept; otherwise only the kept bytes are copied. A small response is
 * then kept for free, and no capture holds more than `limit` bytes of memory per body.
 */
export class BodyCollector {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private pinned = 0;
  size = 0;

  constructor(private readonly limit: number) {}

  add(chunk: Buffer): void {
    this.size += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) return;
    let piece = room < chunk.length ? chunk.subarray(0, room) : chunk;
    const backing = piece.buffer.byteLength;
    if (this.pinned + backing <= this.limit) this.pinned += backing;
    else piece = Buffer.from(piece);
    this.chunks.push(piece);
    this.kept += piece.length;
  }

  result(): CapturedBody {
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    return { size: this.size, truncated: this.size > this.kept, base64: bytes.toString('base64') };
  }
}

/** Flat header pairs to [name, value] tuples. */
export function headerTuples(pairs: readonly string[]): Array<[string, string]> {
  const tuples: Array<[string, string]> = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) tuples.push([pairs[i]!, pairs[i + 1]!]);
  return tuples;
}

/** Where a finished capture goes (the inspector's store); one per inspector, not per request. */
export interface CaptureSink {
  stored(exchange: CapturedExchange): void;
}

/**
 * One exchange as it passes. This runs on every request of an inspected tunnel and each one is
 * kept for the next maxRequests requests, long enough to outlive the young generation of the
 * heap, so it holds references, not copies: the request head as the edge sent it (copied only
 * when `copyHeaders` says the host rewrite will edit it in place), the response header array,
 * and the body pieces (BodyCollector). Ids, tuples, base64 and dates are built by record(),
 * when someone reads the capture, once.
 */
export class CapturedExchange implements ExchangeTap {
  /** Its place in the inspector (the digits of its id); 0 until stored. */
  seq = 0;
  private readonly startedAt = Date.now();
  private readonly requestHeaders: string[];
  /** Created with the first body byte: most requests have no body to keep. */
  private requestKept: BodyCollector | undefined;
  private responseKept: BodyCollector | undefined;
  private responseHeaders: string[] | undefined;
  private status = -1;
  private durationMs = 0;
  private built: InspectedRequest | undefined;

  constructor(
    private readonly head: RequestHead,
    /** The tunnel it came through (its `url` is read when the record is built). */
    readonly tunnel: { readonly url: string; readonly target?: { readonly hostPort: string } },
    private readonly maxBodyBytes: number,
    private readonly sink: CaptureSink,
    copyHeaders: boolean,
    readonly replayOf?: string,
  ) {
    this.requestHeaders = copyHeaders ? head.h.slice() : head.h;
  }

  get id(): string {
    return `req_${this.seq}`;
  }

  requestBody(chunk: Buffer): void {
    (this.requestKept ??= new BodyCollector(this.maxBodyBytes)).add(chunk);
  }

  response(_status: number, headers: string[]): void {
    // Not copied: the exchange hands the array on as it is and never edits it after this.
    this.responseHeaders = headers;
  }

  responseBody(chunk: Buffer): void {
    (this.responseKept ??= new BodyCollector(this.maxBodyBytes)).add(chunk);
  }

  done(log: RequestLog): void {
    if (this.status !== -1) return;
    this.status = log.status;
    this.durationMs = log.durationMs;
    this.sink.stored(this);
  }

  /** The capture as the API shows it, built on first read. */
  record(): InspectedRequest {
    if (this.built) return this.built;
    const record: InspectedRequest = {
      id: this.id,
      tunnel: this.tunnel.url,
      ...(this.tunnel.target !== undefined ? { target: this.tunnel.target.hostPort } : {}),
      startedAt: new Date(this.startedAt).toISOString(),
      method: this.head.m,
      path: this.head.p,
      status: this.status,
      durationMs: Math.round(this.durationMs * 10) / 10,
      request: { headers: headerTuples(this.requestHeaders), body: bodyOf(this.requestKept) },
    };
    if (this.replayOf !== undefined) record.replayOf = this.replayOf;
    if (this.responseHeaders !== undefined) {
      record.response = { headers: headerTuples(this.responseHeaders), body: bodyOf(this.responseKept) };
    }
    this.built = record;
    return record;
  }
}

function bodyOf(collector: BodyCollector | undefined): CapturedBody {
  return collector ? collector.result() : { size: 0, truncated: false, base64: '' };
}
