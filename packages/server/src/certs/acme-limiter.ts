const MINUTE_MS = 60_000;

/** Orders started per rolling minute across all hosts: a burst of new names cannot exhaust the CA's rate limits. */
export const MAX_ORDERS_PER_MINUTE = 10;
/** Waits after a host's 1st, 2nd, 3rd and later consecutive failures: at most three attempts in its first hour, then one an hour. */
export const RETRY_AFTER_FAILURE_MS: readonly number[] = Object.freeze([5 * MINUTE_MS, 15 * MINUTE_MS, 60 * MINUTE_MS]);
/** Hosts whose failures are remembered; beyond it the oldest is forgotten (and may retry early). */
export const MAX_TRACKED_FAILURES = 10_000;

/** Whether an order may start now, and if not, why and from when. */
export type OrderPermit = { ok: true } | { ok: false; reason: 'backoff' | 'rate'; retryAt: number };

/** Tunables of an OrderLimiter; tests inject a clock. */
export interface OrderLimiterOptions {
  /** Default MAX_ORDERS_PER_MINUTE. */
  maxPerMinute?: number;
  /** Default RETRY_AFTER_FAILURE_MS; the last entry repeats. */
  retryAfterFailureMs?: readonly number[];
  /** Epoch ms; default Date.now. */
  now?: () => number;
}

interface Failures {
  count: number;
  retryAt: number;
}

/**
 * Decides when ACME orders may start: per-host backoff after failures, and a
 * global cap per rolling minute. In-memory and per process; several edge nodes
 * each apply their own limits.
 */
export class OrderLimiter {
  readonly #failures = new Map<string, Failures>();
  #starts: number[] = [];
  readonly #maxPerMinute: number;
  readonly #schedule: readonly number[];
  readonly #now: () => number;

  /** Creates a limiter with no history. */
  constructor(options: OrderLimiterOptions = {}) {
    this.#maxPerMinute = Math.max(1, options.maxPerMinute ?? MAX_ORDERS_PER_MINUTE);
    this.#schedule = options.retryAfterFailureMs ?? RETRY_AFTER_FAILURE_MS;
    if (this.#schedule.length === 0) throw new Error('retryAfterFailureMs needs at least one entry');
    this.#now = options.now ?? Date.now;
  }

  /** Asks to start an order for `host`; a yes is counted against the per-minute cap at once. */
  tryStart(host: string): OrderPermit {
    const now = this.#now();
    const failures = this.#failures.get(host);
    if (failures !== undefined && now < failures.retryAt) return { ok: false, reason: 'backoff', retryAt: failures.retryAt };
    this.#starts = this.#starts.filter((t) => t > now - MINUTE_MS);
    const oldest = this.#starts[0];
    if (oldest !== undefined && this.#starts.length >= this.#maxPerMinute) {
      return { ok: false, reason: 'rate', retryAt: oldest + MINUTE_MS };
    }
    this.#starts.push(now);
    return { ok: true };
  }

  /** Records a failed order; returns when the host may try again. */
  failed(host: string): number {
    const count = (this.#failures.get(host)?.count ?? 0) + 1;
    const wait = this.#schedule[Math.min(count, this.#schedule.length) - 1] ?? 0;
    const retryAt = this.#now() + wait;
    this.#failures.delete(host); // re-inserted last, so Map order is oldest failure first
    this.#failures.set(host, { count, retryAt });
    while (this.#failures.size > MAX_TRACKED_FAILURES) {
      const oldest = this.#failures.keys().next();
      if (oldest.done === true) break;
      this.#failures.delete(oldest.value);
    }
    return retryAt;
  }

  /** Records a successful order: the host's backoff is cleared. */
  succeeded(host: string): void {
    this.#failures.delete(host);
  }
}
