import type { RequestHead } from '@svcrouter/protocol';
import type { RequestLog } from './origin-exchange.js';

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
 * A tap that turns one exchange into an InspectedRequest and hands it to `store` when done.
 * The request head is copied at once, before the host rewrite changes it in place.
 */
export function captureExchange(
  head: RequestHead,
  tunnel: string,
  maxBodyBytes: number,
  store: (record: Omit<InspectedRequest, 'id'>) => void,
  replayOf?: string,
): ExchangeTap {
  // Only flat copies on the request's way through; tuples and dates are built once it is over.
  const startedAt = Date.now();
  const requestHeaders = head.h.slice();
  const requestBody = new BodyCollector(maxBodyBytes);
  const responseBody = new BodyCollector(maxBodyBytes);
  let responseHeaders: string[] | undefined;
  let finished = false;
  return {
    requestBody: (chunk) => requestBody.add(chunk),
    response: (_status, headers) => (responseHeaders = headers.slice()),
    responseBody: (chunk) => responseBody.add(chunk),
    done(log) {
      if (finished) return;
      finished = true;
      const record: Omit<InspectedRequest, 'id'> = {
        tunnel,
        startedAt: new Date(startedAt).toISOString(),
        method: head.m,
        path: head.p,
        status: log.status,
        durationMs: Math.round(log.durationMs * 10) / 10,
        request: { headers: headerTuples(requestHeaders), body: requestBody.result() },
      };
      if (replayOf !== undefined) record.replayOf = replayOf;
      if (responseHeaders !== undefined) record.response = { headers: headerTuples(responseHeaders), body: responseBody.result() };
      store(record);
    },
  };
}
