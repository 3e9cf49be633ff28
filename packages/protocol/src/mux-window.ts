/**
 * Receive-window auto-tuning for one session, as QUIC stacks and yamux do it.
 *
 * A fixed window caps each stream at window / round trip: 1 MiB over a 100 ms agent link is
 * 10 MiB/s, and even on loopback, where a busy event loop stretches the credit round trip to
 * a millisecond or two, a 1 MiB window held a 100 MiB download to ~620 MiB/s against ~760
 * with 4 MiB. A large fixed window would instead let every slow visitor pin that much memory
 * on the receiver. So a stream starts at the session's window and doubles its receive window
 * each time its reader takes a whole window quickly: within four round trips (then the window,
 * not the reader, was the limit) or within GROW_WITHIN_MS, whichever is longer (the ping's
 * round trip is measured with idle loops, so it understates the credit round trip under load).
 * A slow reader never takes a window that fast, so its window stays where it started.
 *
 * Growth needs nothing from the peer: the receiver sends the extra bytes as credit, and the
 * sender only ever adds credit up. What a session's streams have grown beyond their initial
 * window is bounded by a budget, returned when each stream closes.
 */

/** Largest receive window a stream may grow to, unless the session says otherwise. */
export const MAX_STREAM_WINDOW = 16 * 1024 * 1024;
/** Growth beyond their initial windows that all of one session's open streams may hold together. */
export const SESSION_WINDOW_GROWTH_BUDGET = 64 * 1024 * 1024;
/**
 * A reader that takes a whole window within this long is fast enough to grow it, whatever the
 * measured round trip: at the initial 1 MiB, a reader of 100 MiB/s or more.
 */
export const GROW_WITHIN_MS = 10;

export class WindowTuner {
  /** Round trip of the session's last answered ping; undefined until one is answered. */
  rttMs: number | undefined;
  /** Bytes of growth the session's open streams hold now. */
  private granted = 0;

  constructor(
    /** Largest receive window a stream may reach. */
    readonly maxWindow: number,
    /** Total growth the session's open streams may hold at once. */
    readonly budget: number,
  ) {}

  /** Growth the session's streams hold now (for tests and metrics). */
  get grantedBytes(): number {
    return this.granted;
  }

  /**
   * The next receive window of a stream whose reader took a whole `window` in `elapsedMs`:
   * twice as large when that was fast, capped by maxWindow and by what the budget has left;
   * otherwise `window` unchanged. Growth granted here must be given back with release().
   */
  grow(window: number, elapsedMs: number): number {
    if (window >= this.maxWindow) return window;
    const fastWithinMs = Math.max(GROW_WITHIN_MS, 4 * (this.rttMs ?? 0));
    if (elapsedMs > fastWithinMs) return window;
    const growth = Math.min(Math.min(window * 2, this.maxWindow) - window, this.budget - this.granted);
    if (growth <= 0) return window;
    this.granted += growth;
    return window + growth;
  }

  /** A stream that grew by `bytes` has closed. */
  release(bytes: number): void {
    this.granted = Math.max(0, this.granted - bytes);
  }
}
