import { LocalRateLimiter, type RateLimit, type RateLimiter } from './rate-limiter.js';

// The rate limit of a cluster: every node counts in the one shared store (the store's
// rate_limits, reached through SharedRateCounter so this leaf needs no store import), so a
// visitor spread over several nodes, or a pool whose members sit on several nodes, gets exactly
// the tunnel's count per window in total. The window is the LocalRateLimiter's (two fixed
// windows weighted by overlap), decided and counted in one statement per request.
//
// What it costs: one store round trip per allowed request. A refusal is remembered on this node
// until the wait it named is over, and answered from memory meanwhile: other nodes can only add
// to the count, never bring the next allowed request closer, so this is exact and a flood from one
// address costs the store one statement per node and window rather than one per request.

/** What the limiter needs of the store: one request counted, and old counters swept (store's RateLimitRepo). */
export interface SharedRateCounter {
  take(key: string, count: number, windowMs: number, nowMs: number): Promise<{ allowed: boolean; retryAfterMs: number }>;
  sweep(nowMs: number): Promise<number>;
}

export interface ClusterRateLimiterOptions {
  counter: SharedRateCounter;
  /** Told when the store cannot count (then this node counts alone) or cannot sweep; at most once per REPORT_INTERVAL_MS. */
  onError?(err: unknown): void;
}

/** Refusals remembered at most; past it, the oldest go first (a flood of addresses cannot grow memory). */
export const MAX_REMEMBERED_REFUSALS = 100_000;
/** A store that is down fails every request: its errors are reported at most this often. */
export const REPORT_INTERVAL_MS = 10_000;
/** How often one node sweeps the store's counters whose windows have passed. */
export const SWEEP_INTERVAL_MS = 60_000;

/** A RateLimiter counting in the store every node of a cluster shares. */
export class ClusterRateLimiter implements RateLimiter {
  /** Key (with its limit) → until when it is refused, in ms. */
  private readonly refusedUntil = new Map<string, number>();
  /** While the store cannot answer, each node counts alone: a limit per node beats none, and beats refusing everyone. */
  private readonly fallback = new LocalRateLimiter();
  private lastSweep = 0;
  private lastReport = -Infinity;

  constructor(private readonly options: ClusterRateLimiterOptions) {}

  take(key: string, limit: RateLimit, nowMs: number): number | Promise<true | number> {
    // The limit is part of the remembered key: a tunnel bound again with another limit starts afresh.
    const remembered = `${limit.count}/${limit.windowMs}/${key}`;
    const until = this.refusedUntil.get(remembered);
    if (until !== undefined) {
      if (nowMs < until) return secondsUntil(until, nowMs);
      this.refusedUntil.delete(remembered);
    }
    if (nowMs - this.lastSweep >= SWEEP_INTERVAL_MS) this.sweep(nowMs);
    return this.options.counter.take(key, limit.count, limit.windowMs, nowMs).then(
      (verdict) => {
        if (verdict.allowed) return true;
        this.remember(remembered, nowMs + verdict.retryAfterMs);
        return secondsUntil(nowMs + verdict.retryAfterMs, nowMs);
      },
      (err: unknown) => {
        this.report(err, nowMs);
        return this.fallback.take(key, limit, nowMs);
      },
    );
  }

  /** How many refusals are remembered (tests). */
  get rememberedRefusals(): number {
    return this.refusedUntil.size;
  }

  private remember(key: string, until: number): void {
    if (this.refusedUntil.size >= MAX_REMEMBERED_REFUSALS) {
      // Map order is insertion order: the oldest refusal goes. Forgetting one only costs a store round trip.
      const oldest = this.refusedUntil.keys().next();
      if (!oldest.done) this.refusedUntil.delete(oldest.value);
    }
    this.refusedUntil.set(key, until);
  }

  private sweep(nowMs: number): void {
    this.lastSweep = nowMs;
    for (const [key, until] of this.refusedUntil) if (until <= nowMs) this.refusedUntil.delete(key);
    this.options.counter.sweep(nowMs).catch((err: unknown) => this.report(err, nowMs));
  }

  private report(err: unknown, nowMs: number): void {
    if (nowMs - this.lastReport < REPORT_INTERVAL_MS) return;
    this.lastReport = nowMs;
    this.options.onError?.(err);
  }
}

/** Whole seconds, at least 1, from now until `until`: Retry-After. */
function secondsUntil(until: number, nowMs: number): number {
  return Math.max(1, Math.ceil((until - nowMs) / 1000));
}
