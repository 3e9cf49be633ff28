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

/** Collects a body up to `limit` bytes, copying only what it keeps. */
export class BodyCollector {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  size = 0;

  constructor(private readonly limit: number) {}

  add(chunk: Buffer): void {
    this.size += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) return;
    // A copy: the protocol may reuse the buffer it handed over once this call returns.
    const piece = Buffer.from(chunk.subarray(0, room));
    this.chunks.push(piece);
    this.kept += piece.length;
  }

  result(): CapturedBody {
    return { size: this.size, truncated: this.size > this.kept, base64: Buffer.concat(this.chunks).toString('base64') };
  }
}

/** Flat header pairs to [name, value] tuples. */
export function headerTuples(pairs: readonly string[]): Array<[string, string]> {
  const tuples: Array<[string, string]> = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) tuples.push([pairs[i]!, pairs[i + 1]!]);
  return tuples;
}

/**
 * One exchange as it passes: flat copies only (header arrays, the first body bytes, a clock
 * reading), because this runs on every request of an inspected tunnel. Tuples, base64 and
 * dates are built by record(), when someone reads the capture, once.
 */
export class CapturedExchange implements ExchangeTap {
  id = '';
  private readonly startedAt = Date.now();
  private readonly method: string;
  private readonly path: string;
  private readonly requestHeaders: string[];
  /** Created with the first body byte: most requests have no body to keep. */
  private requestKept: BodyCollector | undefined;
  private responseKept: BodyCollector | undefined;
  private responseHeaders: string[] | undefined;
  private log: RequestLog | undefined;
  private built: InspectedRequest | undefined;

  constructor(
    head: RequestHead,
    readonly tunnel: string,
    private readonly maxBodyBytes: number,
    private readonly onDone: (exchange: CapturedExchange) => void,
    readonly replayOf?: string,
  ) {
    this.method = head.m;
    this.path = head.p;
    // A copy: the host rewrite edits the head in place after capture starts.
    this.requestHeaders = head.h.slice();
  }

  requestBody(chunk: Buffer): void {
    (this.requestKept ??= new BodyCollector(this.maxBodyBytes)).add(chunk);
  }

  response(_status: number, headers: string[]): void {
    this.responseHeaders = headers.slice();
  }

  responseBody(chunk: Buffer): void {
    (this.responseKept ??= new BodyCollector(this.maxBodyBytes)).add(chunk);
  }

  done(log: RequestLog): void {
    if (this.log !== undefined) return;
    this.log = log;
    this.onDone(this);
  }

  /** The capture as the API shows it, built on first read. */
  record(): InspectedRequest {
    if (this.built) return this.built;
    const log = this.log!;
    const record: InspectedRequest = {
      id: this.id,
      tunnel: this.tunnel,
      startedAt: new Date(this.startedAt).toISOString(),
      method: this.method,
      path: this.path,
      status: log.status,
      durationMs: Math.round(log.durationMs * 10) / 10,
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
