/** At most `count` requests per key in any window of `windowMs`. */
export interface RateLimit {
  count: number;
  windowMs: number;
}

/**
 * Counts requests per key (a tunnel's hostname and a visitor address). `take` counts one request
 * and answers true when it is within the limit, else the seconds to wait (Retry-After), and the
 * refused request is not counted. One node's memory (LocalRateLimiter), or a store every node of
 * a cluster shares: the edge asks either the same way.
 */
export interface RateLimiter {
  take(key: string, limit: RateLimit, nowMs: number): true | number | Promise<true | number>;
}

/** Most keys a LocalRateLimiter holds; past it, the longest idle ones go first. */
export const MAX_LIMITER_KEYS = 100_000;
/** Takes between two sweeps of idle keys. */
const SWEEP_EVERY = 4096;

interface Counter {
  /** Start of the current fixed window. */
  start: number;
  /** Requests counted in the current and the previous window. */
  current: number;
  previous: number;
  windowMs: number;
}

/**
 * A sliding window in one node's memory, as two fixed windows weighted by overlap (the previous
 * window counts for the part of it the sliding window still covers): a constant 40 bytes or so
 * per key whatever the count, exact at a window's start and never more permissive than one
 * window's count by more than the previous window's share. Keys idle for two windows are swept;
 * the map never holds more than MAX_LIMITER_KEYS (the oldest inserted go first).
 */
export class LocalRateLimiter implements RateLimiter {
  private readonly counters = new Map<string, Counter>();
  private takes = 0;

  constructor(private readonly maxKeys = MAX_LIMITER_KEYS) {}

  take(key: string, limit: RateLimit, nowMs: number): true | number {
    if (++this.takes >= SWEEP_EVERY || this.counters.size >= this.maxKeys) this.sweep(nowMs);
    const { count, windowMs } = limit;
    let counter = this.counters.get(key);
    if (counter === undefined || counter.windowMs !== windowMs) {
      counter = { start: nowMs - (nowMs % windowMs), current: 0, previous: 0, windowMs };
      this.counters.set(key, counter);
    } else if (nowMs >= counter.start + windowMs) {
      const windows = Math.floor((nowMs - counter.start) / windowMs);
      counter.previous = windows === 1 ? counter.current : 0;
      counter.current = 0;
      counter.start += windows * windowMs;
    }
    const elapsed = nowMs - counter.start;
    const weight = 1 - elapsed / windowMs;
    if (counter.previous * weight + counter.current + 1 <= count) {
      counter.current++;
      return true;
    }
    return retryAfterSeconds(counter, count, elapsed);
  }

  /** How many keys are held (tests, metrics). */
  get size(): number {
    return this.counters.size;
  }

  private sweep(nowMs: number): void {
    this.takes = 0;
    for (const [key, counter] of this.counters) {
      if (nowMs >= counter.start + 2 * counter.windowMs) this.counters.delete(key);
    }
    // Still full: drop the oldest inserted keys (Map order), so memory stays bounded under a flood of addresses.
    let excess = this.counters.size - this.maxKeys + 1;
    for (const key of this.counters.keys()) {
      if (excess-- <= 0) break;
      this.counters.delete(key);
    }
  }
}

/** Whole seconds (at least 1) until one more request fits: the weight of the previous window must fall far enough. */
function retryAfterSeconds(counter: Counter, count: number, elapsed: number): number {
  const { windowMs, current, previous } = counter;
  let waitMs: number;
  if (current + 1 <= count && previous > 0) {
    // Within this window: wait until previous * (1 - t/W) + current + 1 <= count.
    const t = windowMs * (1 - (count - 1 - current) / previous);
    waitMs = t - elapsed;
  } else {
    // Into the next window, where this one's count becomes the previous one's.
    const t = windowMs * (1 - (count - 1) / Math.max(current, 1));
    waitMs = windowMs - elapsed + Math.max(t, 0);
  }
  return Math.max(1, Math.ceil(waitMs / 1000));
}
