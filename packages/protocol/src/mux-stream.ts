import { Duplex } from 'node:stream';
import { FLAG_END, FrameType, MAX_DATA_CHUNK } from './frame.js';
import { StreamResetError } from './errors.js';

/** What a stream needs from its session; implemented by Mux. */
export interface StreamTransport {
  /** Writes one frame; the payload is not copied. */
  sendFrame(type: number, flags: number, stream: number, payload?: Buffer): void;
  /** Runs `callback` once the session socket can take more bytes (at once if it can now). */
  whenWritable(callback: () => void): void;
  /** Forgets the stream: no more frames will be sent or accepted for it. */
  forget(stream: number): void;
}

/**
 * One multiplexed stream: a Duplex whose writes become DATA frames and whose reads come
 * from the peer's DATA frames.
 *
 * Flow control (per stream, credit based, as in HTTP/2 and yamux): the sender may have at
 * most `window` bytes unacknowledged; the receiver returns credit with WINDOW frames only
 * when its reader pulls (`_read`), so a slow consumer stops its own producer and never
 * anyone else's, and at most `window` bytes per stream sit in memory on the receiver.
 */
export class MuxStream extends Duplex {
  /** Open metadata sent with OPEN (the request head, for example). */
  readonly meta: unknown;
  /** The peer's HEADERS metadata, once received. */
  headers: unknown;
  private sendWindow: number;
  private recvAllowance: number;
  private creditOwed = 0;
  private localEnded = false;
  private remoteEnded = false;
  private closedOnWire = false;
  private resumeWrite: (() => void) | undefined;
  private localResetCode: string | undefined;

  constructor(
    private readonly transport: StreamTransport,
    readonly id: number,
    meta: unknown,
    private readonly window: number,
  ) {
    super({ allowHalfOpen: true, readableHighWaterMark: Math.min(window, 64 * 1024) });
    this.meta = meta;
    this.sendWindow = window;
    this.recvAllowance = window;
  }

  /** Sends the reply head (HEADERS frame); with `end` the write side closes at once. */
  sendHeaders(meta: unknown, end = false): void {
    if (this.localEnded || this.closedOnWire) return;
    const payload = Buffer.from(JSON.stringify(meta));
    this.transport.sendFrame(FrameType.HEADERS, end ? FLAG_END : 0, this.id, payload);
    if (end) {
      this.localEnded = true;
      this.end();
      this.settleIfDone();
    }
  }

  /** Aborts the stream on both sides with an error code (sent to the peer as RESET). */
  reset(code = 'CANCEL'): void {
    if (this.destroyed) return;
    // A local reset is not an error for our own listeners: 'close' without 'end' says enough.
    this.localResetCode = code;
    this.destroy();
  }

  // ---- frames from the peer (called by Mux) ----

  /** @internal */
  onData(payload: Buffer, flags: number): void {
    if (this.remoteEnded || this.closedOnWire) return;
    if (payload.length > 0) {
      if (payload.length > this.recvAllowance) {
        this.reset('FLOW_CONTROL');
        return;
      }
      this.recvAllowance -= payload.length;
      this.creditOwed += payload.length;
      this.push(payload);
    }
    if (flags & FLAG_END) this.onRemoteEnd();
  }

  /** @internal */
  onHeaders(meta: unknown, flags: number): void {
    if (this.remoteEnded || this.closedOnWire) return;
    this.headers = meta;
    this.emit('headers', meta);
    if (flags & FLAG_END) this.onRemoteEnd();
  }

  /** @internal */
  onWindow(increment: number): void {
    this.sendWindow += increment;
    const resume = this.resumeWrite;
    if (resume && this.sendWindow > 0) {
      this.resumeWrite = undefined;
      resume();
    }
  }

  /** @internal The peer aborted the stream: nothing more will flow either way. */
  onReset(code: string): void {
    if (this.closedOnWire) return;
    this.closedOnWire = true;
    this.transport.forget(this.id);
    this.destroy(new StreamResetError(code, true));
  }

  /** @internal The opening frame said it carries no body. */
  onRemoteEnd(): void {
    if (this.remoteEnded) return;
    this.remoteEnded = true;
    this.push(null);
    this.settleIfDone();
  }

  // ---- Duplex implementation ----

  override _read(): void {
    // Return credit only when the reader pulls: this is what bounds memory per stream.
    if (this.creditOwed > 0 && !this.remoteEnded && !this.closedOnWire) {
      const credit = Buffer.allocUnsafe(4);
      credit.writeUInt32BE(this.creditOwed, 0);
      this.recvAllowance += this.creditOwed;
      this.creditOwed = 0;
      this.transport.sendFrame(FrameType.WINDOW, 0, this.id, credit);
    }
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
      this.transport.sendFrame(FrameType.DATA, FLAG_END, this.id);
      this.settleIfDone();
    }
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.resumeWrite = undefined;
    if (!this.closedOnWire) {
      this.closedOnWire = true;
      this.transport.forget(this.id);
      if (!(this.localEnded && this.remoteEnded)) {
        const code = this.localResetCode ?? (error instanceof StreamResetError ? error.code : 'CANCEL');
        this.transport.sendFrame(FrameType.RESET, 0, this.id, Buffer.from(code));
      }
    }
    callback(error);
  }

  /** Once both directions have ended on the wire, the session can drop the stream id. */
  private settleIfDone(): void {
    if (this.localEnded && this.remoteEnded && !this.closedOnWire) {
      this.closedOnWire = true;
      this.transport.forget(this.id);
    }
  }
}
