import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { pageResponse, type EdgePage } from '../pages.js';
import { HAND_OVER, INCOMPLETE, readRequestHead, type LeanRequest } from './request-head.js';
import { BodyFraming, type BodyFramingValue, type VisitorResponseHead } from './response-head.js';

/** Serves lean requests; answers false (having written nothing) when Node's server must take the request. */
export interface LeanHandler {
  serveLean(connection: VisitorConnection, request: LeanRequest): boolean;
}

/** Told about the visitor's side while a response is being written. */
export interface ResponseOwner {
  /** The visitor's socket can take more after `writeBody` returned false. */
  onVisitorDrain(): void;
  /** The visitor's socket closed before the response was complete. */
  onVisitorGone(): void;
}

export interface VisitorConnectionOptions {
  secure: boolean;
  maxHeadBytes: number;
  /** Idle keep-alive connections are closed after this long (as Node's `keepAliveTimeout`). */
  keepAliveMs: number;
  handler: LeanHandler;
  /** Takes the socket over for good, with the bytes not yet consumed (Node's HTTP server). */
  handOver(socket: Socket | TLSSocket): void;
}

/** Chunks up to this size are framed by copying into one buffer; larger ones are written as three. */
const COPY_FRAMING_BELOW = 16 * 1024;
const CHUNK_END = Buffer.from('\r\n', 'latin1');
const LAST_CHUNK = Buffer.from('0\r\n\r\n', 'latin1');

/** The last chunk with a trailer section; `fields` checked by trailerFields (token names, no CR or LF). */
function lastChunkWithTrailers(fields: readonly string[]): Buffer {
  let text = '0\r\n';
  for (let i = 0; i < fields.length; i += 2) text += `${fields[i]!}: ${fields[i + 1]!}\r\n`;
  return Buffer.from(`${text}\r\n`, 'latin1');
}

/**
 * One visitor's HTTP/1.1 connection on the lean path: reads request heads with the strict reader,
 * writes responses itself, one at a time, and hands the socket to Node's HTTP server, at a request
 * boundary and with the unread bytes put back, as soon as a request needs more than the lean path
 * does (see request-head.ts). Requests pipelined behind the current one wait, with the socket
 * paused once they exceed a head's worth, so a visitor cannot queue unbounded input. The socket
 * is not half-open: the visitor's FIN closes it, and a request in flight is cancelled
 * (`onVisitorGone`), as with Node's server.
 */
export class VisitorConnection {
  readonly ip: string;
  readonly secure: boolean;
  private pending: Buffer | undefined;
  private owner: ResponseOwner | undefined;
  private requestMethod = 'GET';
  private closeAfterResponse = false;
  private framing: BodyFramingValue = BodyFraming.NONE;
  private bodyLeft = 0;
  private corked = false;
  private detached = false;
  private readonly onData = (chunk: Buffer): void => this.receive(chunk);
  private readonly onClose = (): void => this.visitorClose();
  private readonly onDrain = (): void => this.owner?.onVisitorDrain();
  /**
   * The idle timer stays armed for the connection's life (Node re-arms it on every read and
   * write), rather than being cleared and set again around each request: an answer that is
   * merely slow (a long poll, a quiet event stream) is not idleness, so it is let be.
   */
  private readonly onTimeout = (): void => {
    if (this.owner === undefined && this.pending === undefined) this.socket.destroy();
  };

  constructor(
    private readonly socket: Socket | TLSSocket,
    private readonly options: VisitorConnectionOptions,
  ) {
    this.secure = options.secure;
    const address = socket.remoteAddress ?? '';
    this.ip = address.startsWith('::ffff:') ? address.slice(7) : address;
    socket.on('data', this.onData);
    socket.on('close', this.onClose);
    socket.on('drain', this.onDrain);
    socket.on('timeout', this.onTimeout);
    socket.on('error', noop);
    socket.setTimeout(options.keepAliveMs);
  }

  /** Whether the connection stays open after the current response (its head says so when not). */
  get keepAlive(): boolean {
    return !this.closeAfterResponse;
  }

  /** Answers the current request with one of the edge's own pages; the response is then complete. */
  sendPage(page: EdgePage): number {
    if (!this.socket.destroyed) this.socket.write(pageResponse(page, this.requestMethod, !this.closeAfterResponse), 'utf8');
    this.complete();
    return page.status;
  }

  /** Writes an informational (1xx) head, before the response head. */
  writeInterim(text: string): void {
    if (this.socket.destroyed) return;
    this.corkForThisTurn();
    this.socket.write(text, 'latin1');
  }

  /** Writes the response head; the body follows through `writeBody` and `endBody`. */
  startBody(head: VisitorResponseHead): void {
    this.framing = head.framing;
    this.bodyLeft = head.length;
    this.corkForThisTurn();
    this.socket.write(head.text, 'latin1');
  }

  /** Writes body bytes in the head's framing; false means wait for `onVisitorDrain`. */
  writeBody(chunk: Buffer): boolean {
    if (this.socket.destroyed) return true;
    if (this.framing === BodyFraming.NONE || chunk.length === 0) return true;
    this.corkForThisTurn();
    if (this.framing === BodyFraming.LENGTH) {
      // More than announced would be read as the start of the next response: drop it and close.
      if (chunk.length > this.bodyLeft) {
        chunk = chunk.subarray(0, this.bodyLeft);
        this.closeAfterResponse = true;
      }
      this.bodyLeft -= chunk.length;
      return chunk.length === 0 || this.socket.write(chunk);
    }
    const size = `${chunk.length.toString(16)}\r\n`;
    if (chunk.length < COPY_FRAMING_BELOW) {
      const framed = Buffer.allocUnsafe(size.length + chunk.length + 2);
      framed.write(size, 0, 'latin1');
      chunk.copy(framed, size.length);
      framed[framed.length - 2] = 13;
      framed[framed.length - 1] = 10;
      return this.socket.write(framed);
    }
    this.socket.write(size, 'latin1');
    this.socket.write(chunk);
    return this.socket.write(CHUNK_END);
  }

  /**
   * Ends the body; a chunked one carries `trailers` (checked fields) in its last chunk, a
   * Content-Length body has nowhere for them. A body shorter than its Content-Length cannot be
   * completed: the socket closes.
   */
  endBody(trailers?: readonly string[]): void {
    if (this.framing === BodyFraming.CHUNKED) this.socket.write(trailers?.length ? lastChunkWithTrailers(trailers) : LAST_CHUNK);
    else if (this.framing === BodyFraming.LENGTH && this.bodyLeft > 0) return this.abort();
    this.complete();
  }

  /**
   * The response cannot be completed (the head is out, the upstream failed): what was written
   * leaves, then the connection closes, so the visitor sees a short body, not a hang.
   */
  abort(): void {
    this.owner = undefined;
    this.flushCork();
    this.socket.destroy();
  }

  /** The request now owns the connection's response side. */
  adopt(owner: ResponseOwner): void {
    this.owner = owner;
  }

  private receive(chunk: Buffer): void {
    if (this.owner !== undefined || this.pending !== undefined) {
      // A request is being answered: keep what follows for later, up to a head's worth.
      this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
      if (this.pending.length > this.options.maxHeadBytes) this.socket.pause();
      return;
    }
    this.serveFrom(chunk);
  }

  private serveFrom(buffer: Buffer): void {
    const result = readRequestHead(buffer, 0, this.options.maxHeadBytes);
    // A head that is not all here is Node's: its parser keeps state across reads and enforces
    // headersTimeout against visitors who trickle bytes.
    if (result === INCOMPLETE || result === HAND_OVER) return this.handOver(buffer);
    this.requestMethod = result.method;
    this.closeAfterResponse = result.close;
    this.pending = buffer.length > result.headBytes ? buffer.subarray(result.headBytes) : undefined;
    // Owned until the handler adopts it or answers: bytes arriving meanwhile are kept, not parsed.
    this.owner = PLACEHOLDER;
    if (!this.options.handler.serveLean(this, result)) {
      this.owner = undefined;
      this.pending = undefined;
      this.handOver(buffer);
    }
  }

  /** The response is complete: close if asked to, else serve what waited, else idle. */
  private complete(): void {
    this.owner = undefined;
    if (this.socket.destroyed) return;
    if (this.closeAfterResponse) {
      this.socket.end();
      return;
    }
    if (this.pending !== undefined) {
      // The held bytes stay in `pending` until served: what the resumed socket delivers
      // meanwhile (it may have queued while paused) is appended behind them by `receive`, never
      // read first, so bytes of a held request's body are not taken for a request.
      this.socket.resume();
      // Not inline: a burst of pipelined requests answered with pages would otherwise recurse.
      setImmediate(() => {
        if (this.socket.destroyed || this.detached || this.owner !== undefined) return;
        const next = this.pending;
        this.pending = undefined;
        if (next !== undefined) this.serveFrom(next);
      });
    }
  }

  private visitorClose(): void {
    const owner = this.owner;
    this.owner = undefined;
    if (owner !== undefined && owner !== PLACEHOLDER) owner.onVisitorGone();
  }

  private corkForThisTurn(): void {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    corkedThisTurn.push(this);
    if (corkedThisTurn.length === 1) setImmediate(uncorkAll);
  }

  private handOver(unread: Buffer): void {
    this.detached = true;
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('close', this.onClose);
    socket.off('drain', this.onDrain);
    socket.off('timeout', this.onTimeout);
    socket.off('error', noop);
    socket.setTimeout(0);
    // Paused, the unread bytes wait in the socket's buffer for Node's listener instead of being
    // emitted at once to whatever listens now; resuming after the hand-over delivers them first.
    socket.pause();
    if (unread.length > 0) socket.unshift(unread);
    this.options.handOver(socket);
    socket.resume();
  }

  /** @internal */
  flushCork(): void {
    this.corked = false;
    this.socket.uncork();
  }
}

/**
 * Connections written to during this loop turn. A response's head, its body bytes and the end of
 * its framing usually come from one read of the session socket, but across several ticks (the
 * stream starts flowing in a later tick than its head arrives): uncorking in the check phase of
 * the same turn sends them in one write, as the mux does for session frames. Nothing waits for
 * more input.
 */
const corkedThisTurn: VisitorConnection[] = [];

function uncorkAll(): void {
  for (let i = 0; i < corkedThisTurn.length; i++) corkedThisTurn[i]!.flushCork();
  corkedThisTurn.length = 0;
}

function noop(): void {}

/** Stands for "a request is being set up" between reading a head and the handler adopting it. */
const PLACEHOLDER: ResponseOwner = { onVisitorDrain: noop, onVisitorGone: noop };
