import { Duplex } from 'node:stream';
import { FLAG_END, FrameType, MAX_DATA_CHUNK, jsonText } from './frame.js';
import { StreamResetError } from './errors.js';
import { ReceiveCredit, creditPayload } from './mux-credit.js';
import type { WindowTuner } from './mux-window.js';

/** What a stream needs from its session; implemented by Mux. */
export interface StreamTransport {
  /** Writes one frame; the payload is not copied. */
  sendFrame(type: number, flags: number, stream: number, payload?: Buffer): void;
  /** Writes one frame whose payload is `text` in UTF-8 (from jsonText). */
  sendTextFrame(type: number, flags: number, stream: number, text: string): void;
  /** Writes a frame the peer's own frames call for (WINDOW), within the session's reply budget. */
  sendReply(type: number, flags: number, stream: number, payload: Buffer): void;
  /** Runs `callback` once the session socket can take more bytes (at once if it can now). */
  whenWritable(callback: () => void): void;
  /** Whether the session socket can take more bytes now (whenWritable would call back at once). */
  readonly writable: boolean;
  /** Forgets the stream: no more frames will be sent or accepted for it. */
  forget(stream: number): void;
  /** Grows receive windows of readers that keep up; undefined keeps every window fixed. */
  readonly windowTuner?: WindowTuner | undefined;
  /** Whether the peer understands TRAILERS frames; without, trailers are dropped and a plain END is sent. */
  readonly peerTrailers?: boolean;
}

/** What the session needs from a stream of either kind (MuxStream, CallbackStream) to feed it frames. */
export interface StreamEndpoint {
  onData(payload: Buffer, flags: number): void;
  onHeaders(meta: unknown, flags: number): void;
  /** The peer's trailer fields (TRAILERS frame), which end its side. */
  onTrailers(meta: unknown): void;
  onWindow(increment: number): void;
  onReset(code: string): void;
  onRemoteEnd(): void;
  /** Aborts the stream on both sides (RESET to the peer). */
  reset(code: string): void;
}

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
 * One multiplexed stream: a Duplex whose writes become DATA frames and whose reads come
 * from the peer's DATA frames.
 *
 * Flow control (per stream, credit based, as in HTTP/2 and yamux): the sender may have at
 * most `window` bytes unacknowledged. The receiver returns credit with WINDOW frames only
 * for bytes its reader has actually taken out of the buffer, counted a tick after each
 * `_read` and each `read()` that took bytes (at most one WINDOW frame per stream per tick).
 * So a slow consumer stops its own producer and never anyone else's, and at most the receive
 * window's bytes per stream sit in memory on the receiver. The receive window starts at
 * `window` (both sides' initial send credit) and grows only while the reader keeps up
 * (mux-window.ts), by sending the growth as extra credit.
 *
 * Errors: a reset by the peer, a session close and a flow-control violation destroy the
 * stream with a StreamResetError, so `errored`, `finished()`, `pipeline()` and
 * `once(stream, …)` all report the cause. Those errors never crash the process when nobody
 * listens for 'error': the stream carries its own listener for them, because a stream can be
 * dropped at any moment (an abort storm, a session that dies with hundreds of streams).
 * Any other error passed to `destroy(error)` behaves as on every Node stream: unhandled, it
 * is thrown. A local `reset()` is not an error for local listeners: 'close' without 'end'.
 */
export class MuxStream extends Duplex implements StreamEndpoint {
  /** Open metadata sent with OPEN (the request head, for example). */
  readonly meta: unknown;
  /** The peer's HEADERS metadata, once received. */
  headers: unknown;
  /** Code of the reset that ended the stream (ours or the peer's); undefined if it was not reset. */
  resetCode: string | undefined;
  /** The peer's TRAILERS payload (unchecked: see trailerFields), set before 'end'. */
  trailers: unknown;
  /** Trailer fields to send in place of the END frame (endWithTrailers). */
  private trailersToSend: string[] | undefined;
  private sendWindow: number;
  private readonly credit: ReceiveCredit;
  private creditScheduled = false;
  private headersSent = false;
  private localEnded = false;
  private remoteEnded = false;
  private closedOnWire = false;
  private resumeWrite: (() => void) | undefined;

  constructor(
    private readonly transport: StreamTransport,
    readonly id: number,
    meta: unknown,
    /** The session's window: each side's initial credit, and where the receive window starts. */
    initialWindow: number,
  ) {
    // The high-water mark must not exceed the window, or a full buffer would never ask for more.
    super({
      allowHalfOpen: true,
      readableHighWaterMark: Math.min(initialWindow, READ_HIGH_WATER_MARK),
      writableHighWaterMark: WRITE_HIGH_WATER_MARK,
    });
    this.meta = meta;
    this.sendWindow = initialWindow;
    this.credit = new ReceiveCredit(initialWindow, transport.windowTuner);
    // Errors the mux raises itself are safe to leave unhandled; any other keeps Node's default.
    this.on('error', (error) => {
      if (!(error instanceof StreamResetError) && this.listenerCount('error') === 1) throw error;
    });
  }

  /** Bytes received from the peer and not yet acknowledged with credit (at most the window). */
  get receiveBuffered(): number {
    return this.credit.unacknowledged;
  }

  /** Bytes the peer may send on this stream before it must wait for credit. */
  get receiveWindowBytes(): number {
    return this.credit.window;
  }

  /** Bytes this side may still send before it must wait for credit. */
  get sendCredit(): number {
    return this.sendWindow;
  }

  /** Sends the reply head (HEADERS frame) once; with `end` the write side closes at once. */
  sendHeaders(meta: unknown, end = false): void {
    if (this.headersSent || this.localEnded || this.closedOnWire) return;
    this.headersSent = true;
    if (end) this.localEnded = true; // before end(): FLAG_END here replaces the END frame of _final
    this.transport.sendTextFrame(FrameType.HEADERS, end ? FLAG_END : 0, this.id, jsonText(meta));
    if (end) {
      this.end();
      this.settleIfDone();
    }
  }

  /**
   * Ends the write side with trailer fields (flat pairs) after every byte written. Without
   * fields, or to a peer that does not understand TRAILERS, it is a plain end().
   */
  endWithTrailers(fields: string[]): void {
    if (fields.length > 0 && this.transport.peerTrailers) this.trailersToSend = fields;
    this.end();
  }

  /** Aborts the stream on both sides with an error code (sent to the peer as RESET). */
  reset(code = 'CANCEL'): void {
    if (this.destroyed) return;
    this.resetCode = code;
    this.destroy();
  }

  // ---- called by Mux ----

  /** @internal The OPEN frame carried FLAG_END: nothing will be written on this side. */
  endOnOpen(): void {
    this.localEnded = true;
    this.end();
  }

  /** @internal */
  onData(payload: Buffer, flags: number): void {
    if (this.remoteEnded || this.closedOnWire) return;
    if (payload.length > 0) {
      if (!this.credit.receive(payload.length)) {
        this.resetCode = 'FLOW_CONTROL';
        this.destroy(new StreamResetError('FLOW_CONTROL', false));
        return;
      }
      this.push(payload);
    }
    if (flags & FLAG_END) this.onRemoteEnd();
  }

  /** @internal */
  onHeaders(meta: unknown, flags: number): void {
    if (this.remoteEnded || this.closedOnWire || this.headers !== undefined) return;
    this.headers = meta;
    this.emit('headers', meta);
    if (flags & FLAG_END) this.onRemoteEnd();
  }

  /** @internal */
  onTrailers(meta: unknown): void {
    if (this.remoteEnded || this.closedOnWire) return;
    this.trailers = meta;
    this.onRemoteEnd();
  }

  /** @internal */
  onWindow(increment: number): void {
    if (this.closedOnWire) return;
    this.sendWindow += increment;
    const resume = this.resumeWrite;
    if (resume && this.sendWindow > 0) {
      this.resumeWrite = undefined;
      resume();
    }
  }

  /** @internal The peer aborted the stream, or the session ended: nothing more will flow. */
  onReset(code: string): void {
    if (this.closedOnWire) return;
    this.closedOnWire = true;
    this.resetCode = code;
    this.transport.forget(this.id);
    this.destroy(new StreamResetError(code, true));
  }

  /** @internal The peer will send no more bytes. */
  onRemoteEnd(): void {
    if (this.remoteEnded || this.closedOnWire) return;
    this.remoteEnded = true;
    this.push(null);
    this.settleIfDone();
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
    if (this.credit.unacknowledged > this.readableLength) this.scheduleCredit();
    return chunk;
  }

  override _read(): void {
    this.scheduleCredit();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    let offset = 0;
    const step = (): void => {
      while (offset < chunk.length) {
        if (this.closedOnWire) return callback();
        const size = Math.min(chunk.length - offset, this.sendWindow, MAX_DATA_CHUNK);
        if (size <= 0) {
          this.resumeWrite = step;
          return;
        }
        this.sendWindow -= size;
        const piece = offset === 0 && size === chunk.length ? chunk : chunk.subarray(offset, offset + size);
        this.transport.sendFrame(FrameType.DATA, 0, this.id, piece);
        offset += size;
      }
      // Hold the callback while the session socket is congested: backpressure reaches the source.
      this.transport.whenWritable(() => callback());
    };
    step();
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.localEnded && !this.closedOnWire) {
      this.localEnded = true;
      const trailers = this.trailersToSend;
      if (trailers) this.transport.sendTextFrame(FrameType.TRAILERS, FLAG_END, this.id, jsonText(trailers));
      else this.transport.sendFrame(FrameType.DATA, FLAG_END, this.id);
      this.settleIfDone();
    }
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.resumeWrite = undefined;
    this.credit.release();
    if (!this.closedOnWire) {
      this.closedOnWire = true;
      this.transport.forget(this.id);
      if (!(this.localEnded && this.remoteEnded)) {
        this.resetCode ??= error instanceof StreamResetError ? error.code : 'CANCEL';
        this.transport.sendFrame(FrameType.RESET, 0, this.id, Buffer.from(this.resetCode));
      }
    }
    callback(error);
  }

  /**
   * Readable calls _read before it takes the bytes of the current read() out of the buffer,
   * so the credit is counted a tick later, once they are gone.
   */
  private scheduleCredit(): void {
    if (this.creditScheduled) return;
    this.creditScheduled = true;
    process.nextTick(() => this.returnCredit());
  }

  /** Returns credit for the bytes the reader has taken (ReceiveCredit); bytes still buffered stay charged. */
  private returnCredit(): void {
    this.creditScheduled = false;
    if (this.remoteEnded || this.closedOnWire) return;
    const credit = this.credit.take(this.readableLength);
    if (credit > 0) this.transport.sendReply(FrameType.WINDOW, 0, this.id, creditPayload(credit));
  }

  /** Once both directions have ended on the wire, the session can drop the stream id. */
  private settleIfDone(): void {
    if (this.localEnded && this.remoteEnded && !this.closedOnWire) {
      this.closedOnWire = true;
      this.transport.forget(this.id);
    }
  }
}
