import { FLAG_END, FrameType, MAX_DATA_CHUNK, jsonText } from './frame.js';
import { StreamResetError } from './errors.js';
import { ReceiveCredit, creditPayload } from './mux-credit.js';
import type { StreamTransport } from './stream-transport.js';

/**
 * What a CallbackStream tells its owner. Each method is called synchronously from the frame
 * that caused it (or from resume() for data that waited), never after a local reset().
 */
export interface CallbackStreamHandler {
  /** The peer's HEADERS metadata (once). */
  onHeaders?(meta: unknown): void;
  /** An informational reply head (INFO), zero or more times before onHeaders. */
  onInfo?(meta: unknown): void;
  /** Bytes from the peer. Taking them returns their credit, so call pause() to hold the sender. */
  onData?(chunk: Buffer): void;
  /** The peer will send no more bytes (after the last onData); its trailers, if any, are in `stream.trailers`. */
  onEnd?(): void;
  /** write() returned false and the stream can take more now. */
  onDrain?(): void;
  /** The peer reset the stream, the session closed, or the peer broke flow control: nothing more will flow. */
  onReset(error: StreamResetError): void;
  /**
   * The stream was reset on this side (by the owner, or by the session because a callback threw).
   * Only an owner that outlives the stream's callbacks needs it: StreamDuplex destroys itself here.
   */
  onLocalReset?(): void;
  /**
   * Bytes already handed to onData that the owner still holds unread; their credit stays
   * unreturned, so the peer's unacknowledged bytes bound what the owner buffers. StreamDuplex
   * reports its Readable buffer; an owner that consumes each chunk at once leaves it unset.
   */
  readonly unread?: number;
}

/**
 * One multiplexed stream, the only kind a Mux hands out (`open()`, `onStream`): the protocol's
 * stream state machine (frames, flow control, reset semantics), driven by handler callbacks.
 * HTTP exchanges (the edge's lean path, the agent's origin client) drive it directly, because a
 * Duplex costs a proxied request far more than the exchange needs (docs/performance.md,
 * "Callback streams"). Code that pipes bytes (upgrades, Node's HTTP server, raw tunnels) wraps
 * it in a Duplex itself with streamDuplex() (stream-duplex.ts).
 *
 * Reading: data is handed to `onData` as it arrives unless the owner paused the stream; what
 * arrives while paused waits (at most the receive window) and is delivered by resume(). Credit
 * follows each delivery (ReceiveCredit), less what the owner reports still `unread`. Writing:
 * write() sends at once as far as the send credit allows and queues the rest; it returns false
 * while bytes wait for credit or the session socket is congested, and `onDrain` follows once
 * neither holds.
 */
export class CallbackStream {
  /** The peer's HEADERS metadata, once received. */
  headers: unknown;
  /** Code of the reset that ended the stream (ours or the peer's); undefined if it was not reset. */
  resetCode: string | undefined;
  /** The peer's TRAILERS payload (unchecked: see trailerFields), set before onEnd. */
  trailers: unknown;
  /** Trailer fields to send in place of the END frame (endWithTrailers). */
  private trailersToSend: string[] | undefined;
  private handler: CallbackStreamHandler | undefined;
  /** The handler reports bytes it holds `unread` (StreamDuplex); read once here, off the per-chunk path. */
  private ownerBuffers = false;
  private readonly credit: ReceiveCredit;
  private sendWindow: number;
  /**
   * Received while paused (or before a handler was attached), in order, from waitingHead on.
   * Delivered slots are cleared at once, so the array never keeps a delivered chunk alive.
   */
  private waiting: Array<Buffer | undefined> | undefined;
  /** Index of the next chunk to deliver: an index, not shift(), which is linear in the chunks held. */
  private waitingHead = 0;
  private waitingBytes = 0;
  /** Written beyond the send credit, in order; sent as WINDOW frames arrive. */
  private unsent: Buffer[] | undefined;
  private unsentBytes = 0;
  private paused = false;
  private delivering = false;
  private remoteEnded = false;
  private endDelivered = false;
  /** end() was called; the END frame leaves once every unsent byte has. */
  private localEnded = false;
  private endSent = false;
  private headersSent = false;
  private needDrain = false;
  private drainWaiting = false;
  /** No frame is sent or accepted any more: both sides ended, or the stream was reset. */
  private closedOnWire = false;
  /** A local reset: the owner gets no more callbacks. */
  private abandoned = false;
  /** The peer's reset (or the session's close) that came before any handler: told to the first one. */
  private unheardFailure: StreamResetError | undefined;

  constructor(
    private readonly transport: StreamTransport,
    readonly id: number,
    /** Open metadata sent with OPEN (the request head, for example). */
    readonly meta: unknown,
    initialWindow: number,
  ) {
    this.sendWindow = initialWindow;
    this.credit = new ReceiveCredit(initialWindow, transport.windowTuner);
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

  /** Whether the stream has ended on the wire (both sides done, or reset). */
  get closed(): boolean {
    return this.closedOnWire;
  }

  /** Whether this side's write side is closed (end(), a head sent with `end`, or an OPEN with END). */
  get writeEnded(): boolean {
    return this.localEnded;
  }

  /**
   * Sets the owner. Data and an end that arrived before it (the END of an OPEN, say) are
   * delivered now, unless the stream is paused; a stream already reset tells it so at once.
   */
  attach(handler: CallbackStreamHandler): void {
    this.handler = handler;
    this.ownerBuffers = handler.unread !== undefined;
    if (this.abandoned) return this.tellLateOwner(handler);
    this.deliverGuarded();
  }

  // ---- reading ----

  /** Holds the peer: later data waits here, its credit unreturned. */
  pause(): void {
    this.paused = true;
  }

  /** Delivers what waited, then data as it arrives. */
  resume(): void {
    this.paused = false;
    this.deliverGuarded();
  }

  // ---- writing ----

  /**
   * Sends the reply head (HEADERS frame) once; with `end` the write side closes at once.
   * `text` is jsonText(meta) when the caller has it already (a head it sends again and again).
   * Returns false when it was not sent (already sent, ended or closed).
   */
  sendHeaders(meta: unknown, end = false, text?: string): boolean {
    if (this.headersSent || this.localEnded || this.closedOnWire) return false;
    this.headersSent = true;
    if (end) this.localEnded = this.endSent = true;
    this.transport.sendTextFrame(FrameType.HEADERS, end ? FLAG_END : 0, this.id, text ?? jsonText(meta));
    if (end) this.settleIfDone();
    return true;
  }

  /** Sends an informational reply head (INFO frame); only before the reply head itself. */
  sendInfo(meta: unknown): void {
    if (this.headersSent || this.localEnded || this.closedOnWire) return;
    this.transport.sendTextFrame(FrameType.INFO, 0, this.id, jsonText(meta));
  }

  /**
   * Sends `chunk` as DATA. Returns false while bytes wait for credit or the session socket is
   * congested; `onDrain` follows. Bytes written after a reset are dropped.
   */
  write(chunk: Buffer): boolean {
    if (this.localEnded) throw new Error('write after end');
    if (this.closedOnWire) return false;
    if (this.unsentBytes > 0) this.hold(chunk, 0);
    else this.sendData(chunk);
    if (this.unsentBytes === 0 && this.transport.writable) return true;
    this.needDrain = true;
    if (this.unsentBytes === 0) this.waitForSession();
    return false;
  }

  /** Ends the write side: END leaves after every byte written. */
  end(): void {
    if (this.localEnded || this.closedOnWire) return;
    this.localEnded = true;
    if (this.unsentBytes === 0) this.sendEnd();
  }

  /**
   * Ends the write side with trailer fields (flat pairs): TRAILERS leaves after every byte
   * written. Without fields, or to a peer that does not understand TRAILERS, it is a plain end().
   */
  endWithTrailers(fields: string[]): void {
    if (this.localEnded || this.closedOnWire) return;
    if (fields.length > 0 && this.transport.peerTrailers) this.trailersToSend = fields;
    this.end();
  }

  /**
   * Aborts the stream on both sides with an error code (sent to the peer as RESET). No callback
   * follows but onLocalReset.
   */
  reset(code = 'CANCEL'): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.dropHeld();
    if (!this.closedOnWire) {
      this.resetCode = code;
      this.closeOnWire();
      this.transport.sendFrame(FrameType.RESET, 0, this.id, Buffer.from(code));
    }
    this.handler?.onLocalReset?.();
  }

  // ---- called by Mux ----

  /** @internal The OPEN frame carried FLAG_END: nothing will be written on this side. */
  endOnOpen(): void {
    this.localEnded = this.endSent = true;
    this.settleIfDone();
  }

  /** @internal */
  onData(payload: Buffer, flags: number): void {
    if (this.remoteEnded || this.closedOnWire) return;
    if (payload.length > 0) {
      if (!this.credit.receive(payload.length)) return this.failFlowControl();
      if (this.paused || this.handler === undefined || this.waitingBytes > 0 || this.delivering) {
        (this.waiting ??= []).push(payload);
        this.waitingBytes += payload.length;
      } else {
        this.handler.onData?.(payload);
        this.returnCredit();
      }
    }
    if (flags & FLAG_END) this.onRemoteEnd();
  }

  /** @internal */
  onHeaders(meta: unknown, flags: number): void {
    if (this.remoteEnded || this.closedOnWire || this.headers !== undefined) return;
    this.headers = meta;
    this.handler?.onHeaders?.(meta);
    if (flags & FLAG_END) this.onRemoteEnd();
  }

  /** @internal */
  onInfo(meta: unknown): void {
    if (this.remoteEnded || this.closedOnWire || this.headers !== undefined) return;
    this.handler?.onInfo?.(meta);
  }

  onTrailers(meta: unknown): void {
    if (this.remoteEnded || this.closedOnWire) return;
    this.trailers = meta;
    this.onRemoteEnd();
  }

  /** @internal */
  onWindow(increment: number): void {
    if (this.closedOnWire) return;
    this.sendWindow += increment;
    if (this.unsentBytes === 0) return;
    const unsent = this.unsent!;
    this.unsent = undefined;
    this.unsentBytes = 0;
    for (let i = 0; i < unsent.length; i++) {
      if (this.unsentBytes > 0) this.hold(unsent[i]!, 0);
      else this.sendData(unsent[i]!);
    }
    if (this.unsentBytes > 0) return;
    if (this.localEnded) this.sendEnd();
    if (this.needDrain) this.waitForSession();
  }

  /** @internal The peer aborted the stream, or the session ended: nothing more will flow. */
  onReset(code: string): void {
    if (this.closedOnWire) return;
    this.resetCode = code;
    this.closeOnWire();
    this.fail(new StreamResetError(code, true));
  }

  /** @internal The peer will send no more bytes. */
  onRemoteEnd(): void {
    if (this.remoteEnded || this.closedOnWire) return;
    this.remoteEnded = true;
    this.deliver();
    this.settleIfDone();
  }

  /**
   * @internal The owner threw outside a frame of this stream (see StreamTransport.streamFailed):
   * the stream ends, nothing else does.
   */
  ownerFailed(error: unknown): void {
    this.delivering = false;
    this.transport.streamFailed(this.id, error);
  }

  // ---- internals ----

  /**
   * deliver() for the owner's own calls (attach, resume): they come from outside the frame
   * being handled, often from an event of another socket, where a throw would escape the
   * session's per-stream guard and end the process.
   */
  private deliverGuarded(): void {
    try {
      this.deliver();
    } catch (error) {
      this.ownerFailed(error);
    }
  }

  /** Hands waiting data, then the end, to the owner while it is attached and not paused. */
  private deliver(): void {
    if (this.delivering) return; // resume() from inside onData: the running loop goes on
    this.delivering = true;
    while (!this.paused && !this.abandoned && this.handler !== undefined && this.waitingBytes > 0) {
      const waiting = this.waiting!;
      const chunk = waiting[this.waitingHead]!;
      waiting[this.waitingHead++] = undefined;
      this.waitingBytes -= chunk.length;
      this.handler.onData?.(chunk);
    }
    this.delivering = false;
    if (this.abandoned || this.handler === undefined) return;
    if (this.waitingBytes === 0) {
      this.waiting = undefined;
      this.waitingHead = 0;
    } else if (this.waitingHead >= 64 && this.waitingHead * 2 >= this.waiting!.length) {
      this.waiting!.splice(0, this.waitingHead);
      this.waitingHead = 0;
    }
    this.returnCredit();
    if (this.remoteEnded && !this.endDelivered && this.waitingBytes === 0 && !this.paused) {
      this.endDelivered = true;
      this.handler.onEnd?.();
    }
  }

  /** @internal The owner holds nothing more of this stream: its window's growth goes back to the session. */
  releaseWindow(): void {
    this.credit.release();
  }

  /** @internal Returns credit for the bytes the owner has taken; bytes still waiting or unread stay charged. */
  returnCredit(): void {
    if (this.remoteEnded || this.closedOnWire) return;
    const credit = this.credit.take(this.ownerBuffers ? this.waitingBytes + this.handler!.unread! : this.waitingBytes);
    if (credit > 0) this.transport.sendReply(FrameType.WINDOW, 0, this.id, creditPayload(credit));
  }

  /** Sends as much of `chunk` as the credit allows, in frames of at most MAX_DATA_CHUNK; holds the rest. */
  private sendData(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      const size = Math.min(chunk.length - offset, this.sendWindow, MAX_DATA_CHUNK);
      if (size <= 0) return this.hold(chunk, offset);
      this.sendWindow -= size;
      const piece = offset === 0 && size === chunk.length ? chunk : chunk.subarray(offset, offset + size);
      this.transport.sendFrame(FrameType.DATA, 0, this.id, piece);
      offset += size;
    }
  }

  private hold(chunk: Buffer, offset: number): void {
    const rest = offset === 0 ? chunk : chunk.subarray(offset);
    (this.unsent ??= []).push(rest);
    this.unsentBytes += rest.length;
  }

  private sendEnd(): void {
    if (this.endSent) return;
    this.endSent = true;
    const trailers = this.trailersToSend;
    if (trailers) this.transport.sendTextFrame(FrameType.TRAILERS, FLAG_END, this.id, jsonText(trailers));
    else this.transport.sendFrame(FrameType.DATA, FLAG_END, this.id);
    this.settleIfDone();
  }

  /** Calls onDrain once the session socket can take more (at once if it can now). */
  private waitForSession(): void {
    if (this.drainWaiting) return;
    this.drainWaiting = true;
    this.transport.whenWritable(() => {
      this.drainWaiting = false;
      if (!this.needDrain || this.unsentBytes > 0 || this.abandoned || this.closedOnWire) return;
      this.needDrain = false;
      try {
        this.handler?.onDrain?.();
      } catch (error) {
        this.ownerFailed(error);
      }
    });
  }

  private failFlowControl(): void {
    this.resetCode = 'FLOW_CONTROL';
    this.closeOnWire();
    this.transport.sendFrame(FrameType.RESET, 0, this.id, Buffer.from('FLOW_CONTROL'));
    this.fail(new StreamResetError('FLOW_CONTROL', false));
  }

  /** Tells the owner (unless it reset the stream itself) and drops what waited. */
  private fail(error: StreamResetError): void {
    this.dropHeld();
    if (this.abandoned) return;
    this.abandoned = true;
    if (this.handler) this.handler.onReset(error);
    else this.unheardFailure = error;
  }

  /** A handler attached after the stream was reset learns how it ended, as if it had been there. */
  private tellLateOwner(handler: CallbackStreamHandler): void {
    const failure = this.unheardFailure;
    this.unheardFailure = undefined;
    if (failure) handler.onReset(failure);
    else handler.onLocalReset?.();
  }

  private dropHeld(): void {
    this.waiting = this.unsent = undefined;
    this.waitingHead = this.waitingBytes = this.unsentBytes = 0;
  }

  private closeOnWire(): void {
    this.closedOnWire = true;
    this.transport.forget(this.id);
    // An owner that buffers what it was handed (StreamDuplex) still reads under this window: it
    // gives the growth back with releaseWindow() once it lets go.
    if (!this.ownerBuffers) this.credit.release();
  }

  /** Once both directions have ended on the wire, the session can drop the stream id. */
  private settleIfDone(): void {
    if (this.endSent && this.remoteEnded && !this.closedOnWire) this.closeOnWire();
  }
}
