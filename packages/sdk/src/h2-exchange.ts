import http2, { type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import {
  ResetCode,
  trailerFields,
  type CallbackStream,
  type CallbackStreamHandler,
  type RequestHead,
  type ResponseHead,
} from '@svcrouter/protocol';
import type { ExchangeTap } from './capture.js';
import { isOriginForm } from './h1-request.js';
import type { H2OriginPool } from './h2-origin-pool.js';
import { resetCodeFor } from './origin-exchange.js';
import type { RequestLog } from './request-log.js';

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;
/** Logged for a request the visitor abandoned before it completed (as OriginExchange does). */
const STATUS_VISITOR_LEFT = 499;
const STATUS_BAD_GATEWAY = 502;
/** Request fields HTTP/2 forbids (RFC 9113 §8.2.2) or carries as a pseudo-field. */
const NOT_IN_H2 = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'host', 'http2-settings']);

/** Whether a request is a gRPC call (`application/grpc`, `application/grpc+proto`…; not gRPC-Web). */
export function isGrpcRequest(head: RequestHead): boolean {
  const h = head.h;
  for (let i = 0; i < h.length; i += 2) {
    // By length first: this runs on every request, and lower-casing each name allocates.
    if (h[i]!.length !== 12 || h[i]!.toLowerCase() !== 'content-type') continue;
    const type = h[i + 1]!.toLowerCase();
    return type === 'application/grpc' || type.startsWith('application/grpc+') || type.startsWith('application/grpc;');
  }
  return false;
}

/** The HTTP/2 request header block of a visitor's request head. */
export function h2RequestHeaders(head: RequestHead, scheme: 'http' | 'https', fallbackAuthority: string): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { ':method': head.m, ':path': head.p, ':scheme': scheme };
  let authority = '';
  const h = head.h;
  for (let i = 0; i < h.length; i += 2) {
    const name = h[i]!.toLowerCase();
    const value = h[i + 1]!;
    if (name === 'host') authority ||= value;
    if (NOT_IN_H2.has(name) || name.charCodeAt(0) === 58 /* ':' */) continue;
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else if (name === 'cookie') headers[name] = `${String(existing)}; ${value}`;
    else headers[name] = Array.isArray(existing) ? [...existing, value] : [String(existing), value];
  }
  headers[':authority'] = authority || fallbackAuthority;
  // gRPC servers may insist on it (it says the client understands trailers); the edge strips
  // `te` as hop-by-hop, so it is put back for calls that need it.
  if (isGrpcRequest(head)) headers.te = 'trailers';
  return headers;
}

/** An HTTP/2 header object (response or trailers) as flat pairs, pseudo-fields left out. */
export function h2FieldPairs(headers: IncomingHttpHeaders): string[] {
  const out: string[] = [];
  for (const name of Object.keys(headers)) {
    if (name.charCodeAt(0) === 58) continue;
    const value = headers[name];
    if (Array.isArray(value)) for (const item of value) out.push(name, item);
    else if (value !== undefined) out.push(name, String(value));
  }
  return out;
}

/**
 * One visitor request forwarded as an HTTP/2 stream on the origin's pooled connection: both
 * bodies stream at once (gRPC's client-streaming and bidirectional calls send while they
 * receive), trailers pass both ways, and a visitor who leaves cancels the origin's stream
 * with RST_STREAM(CANCEL). Backpressure as OriginExchange: a full origin stream pauses the
 * visitor's, a full visitor stream pauses the origin's. One outcome, logged once.
 */
export class H2Exchange implements CallbackStreamHandler {
  private request: ClientHttp2Stream | undefined;
  private readonly started = performance.now();
  private status = 0;
  private finished = false;
  private retried = false;
  /** The visitor's request trailers, once its body ended. */
  private requestTrailers: string[] = [];
  private responseTrailers: string[] = [];

  constructor(
    private readonly pool: H2OriginPool,
    private readonly stream: CallbackStream,
    private readonly head: RequestHead,
    private readonly scheme: 'http' | 'https',
    private readonly hostPort: string,
    private readonly onLog: (log: RequestLog) => void,
    private readonly editResponseHeaders?: (headers: string[]) => void,
    private readonly tap?: ExchangeTap,
  ) {}

  /** Sends the request. Never throws; failures reset the stream. */
  start(): void {
    if (!isOriginForm(this.head.p)) return this.fail(undefined);
    if (this.send()) this.stream.attach(this);
  }

  /** Opens the origin's stream on the pooled connection; false when that failed (the exchange failed). */
  private send(): boolean {
    const withBody = this.head.b === 1;
    let request: ClientHttp2Stream;
    try {
      request = this.pool
        .session()
        .request(h2RequestHeaders(this.head, this.scheme, this.hostPort), { endStream: !withBody, waitForTrailers: withBody });
    } catch (error) {
      this.fail(error as Error);
      return false;
    }
    this.request = request;
    request.on('response', (headers) => this.onResponse(headers));
    request.on('trailers', (trailers) => (this.responseTrailers = trailerFields(h2FieldPairs(trailers))));
    request.on('data', (chunk: Buffer) => this.onResponseBody(chunk));
    request.on('end', () => this.onResponseEnd());
    request.on('drain', () => this.stream.resume());
    request.on('wantTrailers', () => request.sendTrailers(pairsToHeaders(this.requestTrailers)));
    request.on('error', (error: Error) => this.lost(request, error));
    request.on('close', () => this.lost(request, new Error(`origin closed the stream (code ${request.rstCode})`)));
    return true;
  }

  /**
   * The origin's stream failed or closed before the response completed. One the origin refused
   * (REFUSED_STREAM: a connection that was going away as the request left, which guarantees the
   * origin did nothing with it) is sent once more on a new connection when it has no body, as
   * HTTP/2 clients do; one with a body may have been partly taken from the visitor, so it fails.
   */
  private lost(request: ClientHttp2Stream, error: Error): void {
    if (this.finished || this.request !== request) return;
    if (request.rstCode === NGHTTP2_REFUSED_STREAM && this.status === 0 && this.head.b !== 1 && !this.retried) {
      this.retried = true;
      this.send();
      return;
    }
    this.fail(error);
  }

  // ---- visitor stream (CallbackStreamHandler) ----

  /** @internal The visitor left, or the session closed: the origin's stream is cancelled. */
  onReset(): void {
    if (this.finished) return;
    this.finished = true;
    this.request?.close(NGHTTP2_CANCEL);
    this.log(STATUS_VISITOR_LEFT);
  }

  /** @internal */
  onDrain(): void {
    this.request?.resume();
  }

  /** @internal A piece of the request body. */
  onData(chunk: Buffer): void {
    const request = this.request;
    if (request === undefined || request.destroyed) return;
    this.tap?.requestBody(chunk);
    if (!request.write(chunk)) this.stream.pause();
  }

  /** @internal The request body ended; its trailers, if any, follow it. */
  onEnd(): void {
    const request = this.request;
    if (request === undefined || request.destroyed || request.writableEnded) return;
    this.requestTrailers = trailerFields(this.stream.trailers);
    request.end();
  }

  // ---- origin stream ----

  private onResponse(headers: IncomingHttpHeaders): void {
    if (this.finished) return;
    const status = Number(headers[':status']);
    const pairs = h2FieldPairs(headers);
    this.status = status;
    this.editResponseHeaders?.(pairs);
    this.tap?.response(status, pairs);
    this.stream.sendHeaders({ s: status, h: pairs } satisfies ResponseHead);
  }

  private onResponseBody(chunk: Buffer): void {
    if (this.finished) return;
    this.tap?.responseBody(chunk);
    if (!this.stream.write(chunk)) this.request!.pause();
  }

  private onResponseEnd(): void {
    if (this.finished || this.status === 0) return;
    this.finished = true;
    // The origin answered before taking the whole upload (its choice under HTTP/2): the rest
    // is read and dropped, as for HTTP/1.1.
    this.stream.resume();
    this.stream.endWithTrailers(this.responseTrailers);
    this.log(this.status);
  }

  /** The origin failed: a reset code that tells the edge which page to show (before the head), or a cut answer. */
  private fail(error: Error | undefined): void {
    if (this.finished) return;
    this.finished = true;
    const request = this.request;
    if (request !== undefined && !request.destroyed) request.close(NGHTTP2_CANCEL);
    if (this.status === 0) {
      // A stream made on a connection that failed to open carries the connection's error as its cause.
      this.stream.reset(resetCodeFor((error?.cause as Error | undefined) ?? error));
      this.log(STATUS_BAD_GATEWAY);
    } else {
      this.stream.reset(ResetCode.UPSTREAM_ERROR);
      this.log(this.status);
    }
  }

  private log(status: number): void {
    const log = { method: this.head.m, path: this.head.p, status, durationMs: performance.now() - this.started };
    this.tap?.done(log);
    this.onLog(log);
  }
}

/** Flat trailer pairs as an HTTP/2 header object; repeated names become arrays. */
function pairsToHeaders(pairs: string[]): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (let i = 0; i < pairs.length; i += 2) {
    const existing = headers[pairs[i]!];
    const value = pairs[i + 1]!;
    if (existing === undefined) headers[pairs[i]!] = value;
    else headers[pairs[i]!] = Array.isArray(existing) ? [...existing, value] : [String(existing), value];
  }
  return headers;
}
