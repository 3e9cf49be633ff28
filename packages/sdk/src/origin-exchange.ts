import {
  ResetCode,
  jsonText,
  trailerFields,
  type CallbackStream,
  type CallbackStreamHandler,
  type RequestHead,
  type ResponseHead,
} from '@svcrouter/protocol';
import { LAST_CHUNK, frameRequest, lastChunkWithTrailers, writeChunk, type RequestFraming } from './h1-request.js';
import type { ExchangeTap } from './capture.js';
import type { RequestLog } from './request-log.js';
import type { ResponseHandler, SharedHead } from './h1-response-parser.js';
import type { ConnectionUser, OriginConnection, OriginPool } from './origin-pool.js';
import { readUndelivered } from './origin-salvage.js';

export type { RequestLog } from './request-log.js';

/** Network errors that mean "the local service is not there" rather than "it failed mid-way". */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'ETIMEDOUT']);
/** Of those, the ones only a connection attempt fails with: nothing of the request reached the local service. */
const REFUSED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** Logged for a request the visitor abandoned before it completed (nginx's "client closed request"). */
const STATUS_VISITOR_LEFT = 499;
/** Logged when the origin failed before it answered. */
const STATUS_BAD_GATEWAY = 502;

/**
 * The reset code for a failure to reach the origin, before any response: UPSTREAM_REFUSED when
 * the request never reached it (a pool's edge then tries another member), unless an earlier
 * attempt of this request may have (`fresh` false).
 */
export function resetCodeFor(error: Error | undefined, fresh = true): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  if (fresh && REFUSED_CODES.has(code)) return ResetCode.UPSTREAM_REFUSED;
  return UNREACHABLE_CODES.has(code) ? ResetCode.UPSTREAM_UNREACHABLE : ResetCode.UPSTREAM_ERROR;
}

/**
 * One visitor request forwarded to the origin over a pooled HTTP/1.1 connection: the head in
 * one write, the body streamed behind it, the response parsed and streamed back.
 *
 * Backpressure both ways: a full origin socket pauses the visitor stream and its 'drain'
 * resumes it; a full visitor stream pauses the origin socket and its 'drain' resumes it.
 * Exactly one outcome: the response completes, the origin fails (reset), or the visitor
 * leaves (origin connection destroyed); each logs once. After it, events are ignored.
 */
export class OriginExchange implements ConnectionUser, ResponseHandler, CallbackStreamHandler {
  private connection: OriginConnection | undefined;
  private framing: RequestFraming | undefined;
  private readonly started = performance.now();
  private status = 0;
  private finished = false;
  private retried = false;
  /** Request body bytes written to the origin, and whether its end was (the last chunk, if chunked). */
  private bytesSent = 0;
  private bodyEnd = false;
  private uploadPaused = false;
  private downloadPaused = false;
  /** The callback of body writes (bodyWriteDone), made for the first body byte. */
  private afterBodyWrite: ((error: Error | null | undefined) => void) | undefined;
  /** The response's checked trailer fields (a chunked response's trailer section); usually none. */
  private responseTrailers: string[] | undefined;

  constructor(
    private readonly pool: OriginPool,
    private readonly stream: CallbackStream,
    private readonly head: RequestHead,
    private readonly onLog: (log: RequestLog) => void,
    /** Edits the response headers before they go to the visitor (the host rewrite's Location); usually absent. */
    private readonly editResponseHeaders?: (headers: string[]) => void,
    /** Sees the exchange's bytes for the inspector; absent (and free) when capture is off. */
    private readonly tap?: ExchangeTap,
  ) {}

  /** Sends the request. Never throws; failures reset the stream. */
  start(): void {
    try {
      this.framing = frameRequest(this.head);
    } catch (error) {
      return this.fail(error as Error);
    }
    this.send(this.pool.acquire(this));
    // After send: the body (and its end) can only go out once there is a connection.
    this.stream.attach(this);
  }

  // ---- visitor stream (CallbackStreamHandler) ----

  /** @internal The stream was reset: the visitor left, or the session closed. */
  onReset(): void {
    if (this.finished) return;
    this.finished = true;
    this.dropConnection();
    this.log(STATUS_VISITOR_LEFT);
  }

  /** @internal The visitor stream can take more response body. */
  onDrain(): void {
    if (!this.downloadPaused || this.connection === undefined) return;
    this.downloadPaused = false;
    this.connection.socket.resume();
  }

  /** @internal A piece of the request body. */
  onData(chunk: Buffer): void {
    const connection = this.connection;
    if (this.finished || connection === undefined) return;
    this.tap?.requestBody(chunk);
    this.bytesSent += chunk.length;
    // Made with the first body byte: most requests have no body, and this runs for each one.
    const done = (this.afterBodyWrite ??= (error) => this.bodyWriteDone(error));
    const ok = this.framing!.chunked ? writeChunk(connection.socket, chunk, done) : connection.socket.write(chunk, done);
    if (!ok) {
      this.uploadPaused = true;
      this.stream.pause();
    }
  }

  /** @internal The request body ended cleanly (a failed one is reset instead, unterminated); at once for a body-less request. */
  onEnd(): void {
    const connection = this.connection;
    if (this.finished || connection === undefined) return;
    if (this.framing!.chunked) {
      // Request trailers ride in the last chunk; a body with a Content-Length has nowhere for them.
      const trailers = this.stream.trailers === undefined ? undefined : trailerFields(this.stream.trailers);
      connection.socket.write(trailers?.length ? lastChunkWithTrailers(trailers) : LAST_CHUNK, 'latin1');
    }
    this.bodyEnd = true;
  }

  /**
   * A body write failed: the origin closed while the body was still arriving, most likely after
   * answering without reading it. Its answer may be in the socket unread; Node is about to
   * destroy the socket (right after this callback), so it is read now, and it completes the
   * exchange instead of a failure.
   */
  private bodyWriteDone(error: Error | null | undefined): void {
    const connection = this.connection;
    if (!error || this.finished || connection === undefined) return;
    for (const piece of readUndelivered(connection.socket)) {
      if (this.connection !== connection) return;
      this.onOriginData(piece);
    }
  }

  // ---- origin connection (ConnectionUser) ----

  onOriginData(chunk: Buffer): void {
    try {
      this.connection!.parser.push(chunk);
    } catch (error) {
      this.fail(error as Error);
    }
  }

  onOriginEnd(): void {
    // As onOriginData: the end may complete the response, and what runs then (the log, the
    // inspector's tap) must fail this exchange, not escape the origin socket's event.
    try {
      const connection = this.connection;
      if (connection !== undefined && !connection.parser.end()) this.originLost(connection, undefined);
    } catch (error) {
      this.fail(error as Error);
    }
  }

  onOriginClose(error: Error | undefined): void {
    try {
      if (this.connection !== undefined) this.originLost(this.connection, error);
    } catch (failure) {
      this.fail(failure as Error);
    }
  }

  onOriginDrain(): void {
    if (!this.uploadPaused) return;
    this.uploadPaused = false;
    this.stream.resume();
  }

  // ---- response (ResponseHandler) ----

  /** 100 Continue, 103 Early Hints…: passed on when the edge takes them (older edges do not). */
  onInterimHead(status: number, headers: string[]): void {
    if (this.head.i !== 1) return;
    this.editResponseHeaders?.(headers);
    this.stream.sendInfo({ s: status, h: headers } satisfies ResponseHead);
  }

  onResponseHead(status: number, headers: string[], shared?: SharedHead): void {
    this.status = status;
    const edit = this.editResponseHeaders;
    if (edit !== undefined) {
      // The host rewrite edits in place: a head shared with other responses is copied first.
      if (shared !== undefined) headers = headers.slice();
      edit(headers);
      shared = undefined;
    }
    this.tap?.response(status, headers);
    const head = { s: status, h: headers } satisfies ResponseHead;
    if (shared === undefined) this.stream.sendHeaders(head);
    // A head the origin repeats is encoded for the session once, not per response.
    else this.stream.sendHeaders(head, false, (shared.encoded ??= jsonText(head)));
  }

  onResponseBody(chunk: Buffer): void {
    this.tap?.responseBody(chunk);
    if (!this.stream.write(chunk)) {
      this.downloadPaused = true;
      this.connection!.socket.pause();
    }
  }

  onResponseTrailers(fields: string[]): void {
    this.responseTrailers = trailerFields(fields);
  }

  onResponseComplete(): void {
    const connection = this.connection!;
    this.connection = undefined;
    this.finished = true;
    const requestSent = this.requestSent();
    if (connection.parser.keepAlive && !connection.parser.extraBytes && requestSent) this.pool.release(connection);
    else this.pool.discard(connection);
    // The origin answered without reading the whole upload (a 413, a 401): drop the rest.
    if (!requestSent) this.stream.resume();
    if (this.responseTrailers === undefined) this.stream.end();
    else this.stream.endWithTrailers(this.responseTrailers);
    this.log(this.status);
  }

  // ---- internals ----

  private send(connection: OriginConnection): void {
    this.connection = connection;
    connection.parser.reset(this, this.head.m === 'HEAD');
    connection.socket.write(this.framing!.head, 'latin1');
  }

  /** Whether the whole request, body included, went out: only then may the connection be reused. */
  private requestSent(): boolean {
    if (this.head.b !== 1) return true;
    const framing = this.framing!;
    return framing.chunked ? this.bodyEnd : this.bytesSent === framing.contentLength;
  }

  /**
   * The connection ended or failed before the response completed. A reused connection that
   * fails before any response byte most likely went stale while idle (the origin closed it as
   * we sent): a request without a body is sent once more on a new connection, as undici and
   * Node's http client do. One with a body may have been partly consumed, so it fails.
   */
  private originLost(connection: OriginConnection, error: Error | undefined): void {
    if (this.finished) return;
    const stale = connection.served > 0 && connection.parser.received === 0;
    if (stale && this.head.b !== 1 && !this.retried) {
      this.retried = true;
      this.pool.discard(connection);
      this.send(this.pool.connect(this));
      return;
    }
    this.fail(stale ? undefined : (error ?? new Error('origin closed the connection')));
  }

  /** The origin failed: reset the stream with the code that tells the edge which page to show. */
  private fail(error: Error | undefined): void {
    if (this.finished) return;
    this.finished = true;
    this.dropConnection();
    if (this.status === 0) {
      // A stale connection's attempt may have reached the origin: its retry's refusal is not "nothing sent".
      this.stream.reset(resetCodeFor(error, !this.retried));
      this.log(STATUS_BAD_GATEWAY);
    } else {
      this.stream.reset(ResetCode.UPSTREAM_ERROR);
      this.log(this.status);
    }
  }

  private dropConnection(): void {
    const connection = this.connection;
    this.connection = undefined;
    if (connection !== undefined) this.pool.discard(connection);
  }

  private log(status: number): void {
    const log = { method: this.head.m, path: this.head.p, status, durationMs: performance.now() - this.started };
    // Reporting an exchange must not fail it, nor, from an origin socket's event, the agent.
    try {
      this.tap?.done(log);
      this.onLog(log);
    } catch {
      // The report is lost; the exchange stands.
    }
  }
}
