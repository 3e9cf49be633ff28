import { Duplex } from 'node:stream';
import { StreamResetError } from './errors.js';
import type { CallbackStream, CallbackStreamHandler } from './callback-stream.js';

/** Largest readable buffer a stream keeps before it stops asking for more (never above the window). */
const READ_HIGH_WATER_MARK = 64 * 1024;
/**
 * Bytes a stream's writer may queue before write() returns false. Above Node's 16 KiB default
 * so a 64 KiB chunk read from a socket does not pause its source by itself: with the default,
 * every chunk of a bulk transfer cost a pause, a 'drain' and a resume, and reading stopped
 * while writing (the profile showed an epoll_ctl pair per chunk).
 */
const WRITE_HIGH_WATER_MARK = 256 * 1024;

/**
 * Wraps a stream the mux handed out (`mux.open(meta)` without a handler, or one `onStream`
 * got) in a Node Duplex, for code that pipes bytes: upgraded connections (WebSocket), Node's
 * HTTP server, raw TCP tunnels. The Duplex becomes the stream's handler, so call it before the
 * current turn ends, and attach no other handler. For example, carrying a socket both ways:
 *
 *     const duplex = streamDuplex(mux.open(meta));
 *     socket.pipe(duplex).pipe(socket);
 *
 * Flow control, half-close and resets are the stream's own; StreamDuplex explains how the
 * Duplex maps them.
 */
export function streamDuplex(stream: CallbackStream): StreamDuplex {
  return new StreamDuplex(stream);
}

/**
 * One multiplexed stream as a Duplex (see streamDuplex): a thin adapter over a CallbackStream,
 * which holds the frames, flow control and resets. Its writes go to the stream's write(); what
 * the stream hands over is pushed into the Readable. A stream whose write side already ended
 * (opened with `end`) gives a Duplex whose write side ends too.
 *
 * Flow control: credit goes back only for bytes the reader has taken out of the Readable
 * buffer (the adapter reports the rest as `unread`), counted a tick after each `_read` and each
 * `read()` that took bytes. So a slow consumer stops its own producer and never anyone else's,
 * and at most the receive window's bytes per stream sit in memory on the receiver.
 *
 * Errors: a reset by the peer, a session close and a flow-control violation destroy the
 * stream with a StreamResetError, so `errored`, `finished()`, `pipeline()` and
 * `once(stream, …)` all report the cause. Those errors never crash the process when nobody
 * listens for 'error': the stream carries its own listener for them, because a stream can be
 * dropped at any moment (an abort storm, a session that dies with hundreds of streams).
 * Any other error passed to `destroy(error)` behaves as on every Node stream: unhandled, it
 * is thrown. A local `reset()` is not an error for local listeners: 'close' without 'end'.
 */
export class StreamDuplex extends Duplex implements CallbackStreamHandler {
  private creditScheduled = false;
  /** The callback of a write that waits for credit or for the session socket to drain. */
  private writeDone: (() => void) | undefined;
  /** Trailer fields the end carries (endWithTrailers). */
  private trailersToSend: string[] | undefined;

  constructor(
    /** The stream underneath; frames reach it from the session. */
    private readonly core: CallbackStream,
  ) {
    // The high-water mark must not exceed the window, or a full buffer would never ask for more.
    super({
      allowHalfOpen: true,
      readableHighWaterMark: Math.min(core.receiveWindowBytes, READ_HIGH_WATER_MARK),
      writableHighWaterMark: WRITE_HIGH_WATER_MARK,
    });
    // Errors the mux raises itself are safe to leave unhandled; any other keeps Node's default.
    this.on('error', (error) => {
      if (!(error instanceof StreamResetError) && this.listenerCount('error') === 1) throw error;
    });
    core.attach(this);
    if (core.writeEnded && !this.destroyed) this.end(); // no END frame follows: the stream's own end already left
  }

  get id(): number {
    return this.core.id;
  }

  /** Open metadata sent with OPEN (the request head, for example). */
  get meta(): unknown {
    return this.core.meta;
  }

  /** The peer's HEADERS metadata, once received. */
  get headers(): unknown {
    return this.core.headers;
  }

  /** Code of the reset that ended the stream (ours or the peer's); undefined if it was not reset. */
  get resetCode(): string | undefined {
    return this.core.resetCode;
  }

  /** The peer's TRAILERS payload (unchecked: see trailerFields), set before 'end'. */
  get trailers(): unknown {
    return this.core.trailers;
  }

  /** Bytes received from the peer and not yet acknowledged with credit (at most the window). */
  get receiveBuffered(): number {
    return this.core.receiveBuffered;
  }

  /** Bytes the peer may send on this stream before it must wait for credit. */
  get receiveWindowBytes(): number {
    return this.core.receiveWindowBytes;
  }

  /** Bytes this side may still send before it must wait for credit. */
  get sendCredit(): number {
    return this.core.sendCredit;
  }

  /** Sends the reply head (HEADERS frame) once; with `end` the write side closes at once. */
  sendHeaders(meta: unknown, end = false): void {
    if (this.core.sendHeaders(meta, end) && end) this.end();
  }

  /** Sends an informational reply head (INFO frame); only before the reply head itself. */
  sendInfo(meta: unknown): void {
    this.core.sendInfo(meta);
  }

  /**
   * Ends the write side with trailer fields (flat pairs) after every byte written. Without
   * fields, or to a peer that does not understand TRAILERS, it is a plain end().
   */
  endWithTrailers(fields: string[]): void {
    if (fields.length > 0) this.trailersToSend = fields;
    this.end();
  }

  /** Aborts the stream on both sides with an error code (sent to the peer as RESET). */
  reset(code = 'CANCEL'): void {
    if (this.destroyed) return;
    this.core.reset(code); // onLocalReset destroys the Duplex
  }

  /**
   * Node emits most of a stream's events outside the frame that caused them ('data' after a
   * pause, 'end' and 'close' a tick later, 'drain' when the session socket drains), where a
   * throwing listener would escape the session's per-stream guard and end the process. Such a
   * throw ends this stream instead (STREAM_FAILED, 'streamError' on the session). 'error' keeps
   * Node's behaviour (see the class comment).
   */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'error') return super.emit(event, ...args);
    try {
      return super.emit(event, ...args);
    } catch (error) {
      this.core.ownerFailed(error);
      return true;
    }
  }

  // ---- CallbackStreamHandler: what the stream underneath reports ----

  /** @internal */
  get unread(): number {
    return this.readableLength;
  }

  /** @internal */
  onHeaders(meta: unknown): void {
    this.emit('headers', meta);
  }

  /** @internal Emitted as 'info' (the metadata), before 'headers'. */
  onInfo(meta: unknown): void {
    this.emit('info', meta);
  }

  /** @internal */
  onData(chunk: Buffer): void {
    this.push(chunk);
  }

  /** @internal */
  onEnd(): void {
    this.push(null);
  }

  /** @internal */
  onDrain(): void {
    const done = this.writeDone;
    this.writeDone = undefined;
    done?.();
  }

  /** @internal */
  onReset(error: StreamResetError): void {
    this.destroy(error);
  }

  /** @internal */
  onLocalReset(): void {
    this.destroy();
  }

  // ---- Duplex implementation ----

  /**
   * Every way of consuming a Readable (read(), flowing mode, pipe, async iteration) goes through
   * read(). Credit must follow each read that took bytes, not only _read: while a _read is
   * outstanding Readable does not call it again, so a reader that drains the buffer with plain
   * read() calls would otherwise never return credit, and a stalled sender would wait forever.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the signature of Readable.read
  override read(size?: number): any {
    const chunk: unknown = super.read(size);
    if (this.core.receiveBuffered > this.readableLength) this.scheduleCredit();
    return chunk;
  }

  override _read(): void {
    this.scheduleCredit();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.core.closed || this.core.write(chunk)) return callback();
    this.writeDone = callback;
  }

  override _final(callback: (error?: Error | null) => void): void {
    const trailers = this.trailersToSend;
    if (trailers) this.core.endWithTrailers(trailers);
    else this.core.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.writeDone = undefined;
    this.core.reset(error instanceof StreamResetError ? error.code : 'CANCEL');
    this.core.releaseWindow();
    callback(error);
  }

  /**
   * Readable calls _read before it takes the bytes of the current read() out of the buffer,
   * so the credit is counted a tick later, once they are gone.
   */
  private scheduleCredit(): void {
    if (this.creditScheduled) return;
    this.creditScheduled = true;
    process.nextTick(() => {
      this.creditScheduled = false;
      this.core.returnCredit();
    });
  }
}
