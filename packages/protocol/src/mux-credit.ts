import type { WindowTuner } from './mux-window.js';

/**
 * The receiving half of one stream's flow control (CallbackStream, and so StreamDuplex over it):
 * the peer may have at most `window` bytes unacknowledged; credit
 * goes back only for bytes the reader has taken, in batches of a quarter of the window, and the
 * window grows while the reader keeps up (mux-window.ts).
 *
 * Credit goes back in quarters of the window, as HTTP/2 stacks do: a WINDOW frame per 64 KiB
 * chunk cost the receiver a write(2) and woke the sender once per chunk of a bulk transfer,
 * while the sender still has three quarters of its window to keep going in the meantime.
 * No stall: the sender waits only once all of the window is unacknowledged, and then either
 * the reader has taken a quarter of it (credit goes back) or it has not read that far yet.
 */
export class ReceiveCredit {
  /** Bytes the peer may have unacknowledged on this stream: the initial window, plus any growth. */
  window: number;
  /** Bytes received and not yet returned as credit; never above `window`. */
  unacknowledged = 0;
  /** Least credit worth a WINDOW frame: a quarter of the window (at least one byte). */
  private batch: number;
  /** When the reader began on its current window's worth of bytes (first byte, or last growth check). */
  private epochStartMs: number | undefined;
  /** Bytes the reader has taken since epochStartMs. */
  private epochTaken = 0;

  constructor(
    private readonly initialWindow: number,
    private readonly tuner: WindowTuner | undefined,
  ) {
    this.window = initialWindow;
    this.batch = Math.max(1, Math.floor(initialWindow / 4));
  }

  /** Counts `bytes` arriving; false when they exceed the window (the peer broke flow control). */
  receive(bytes: number): boolean {
    if (bytes > this.window - this.unacknowledged) return false;
    this.unacknowledged += bytes;
    this.epochStartMs ??= performance.now();
    return true;
  }

  /**
   * The credit to send now, given that the reader still holds `buffered` of the received bytes
   * (they stay charged): 0 until it has taken at least a batch. The growth of the window, if the
   * reader earned it, rides along as extra credit.
   */
  take(buffered: number): number {
    const taken = this.unacknowledged - buffered;
    if (taken <= 0 || taken < this.batch) return 0;
    this.unacknowledged -= taken;
    return taken + this.grownBy(taken);
  }

  /** The stream closed: its growth goes back to the session's budget, and it cannot grow again. */
  release(): void {
    this.tuner?.release(this.window - this.initialWindow);
    this.window = this.initialWindow;
  }

  /**
   * Counts `taken` towards the reader's current window's worth; once the reader has taken a
   * whole window, asks the session's tuner whether that was fast enough to grow the window,
   * and returns the growth (0 when it stays).
   */
  private grownBy(taken: number): number {
    const tuner = this.tuner;
    if (!tuner || this.epochStartMs === undefined) return 0;
    this.epochTaken += taken;
    if (this.epochTaken < this.window) return 0;
    const now = performance.now();
    const next = tuner.grow(this.window, now - this.epochStartMs);
    this.epochStartMs = now;
    this.epochTaken = 0;
    const growth = next - this.window;
    this.window = next;
    this.batch = Math.max(1, Math.floor(next / 4));
    return growth;
  }
}

/** A WINDOW frame's payload: `credit` as a u32. */
export function creditPayload(credit: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(credit, 0);
  return payload;
}
