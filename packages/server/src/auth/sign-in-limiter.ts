/** Failed sign-ins counted per account and per client IP within one window. */
export interface SignInLimits {
  perAccount: number;
  perIp: number;
  windowMs: number;
}

/** 5 failures per account or 20 per client IP within 15 minutes. */
export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { perAccount: 5, perIp: 20, windowMs: 15 * 60 * 1000 };

/** Keys tracked at most: an attacker cycling emails or addresses cannot grow memory without bound. */
const MAX_TRACKED_KEYS = 50_000;

/**
 * In-memory limiter of failed sign-ins (per process: each edge node counts its own). Each key
 * keeps the times of its recent failures; a key is blocked once it holds the limit within the
 * window, until its oldest counted failure leaves the window.
 */
export class SignInLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until the account or the IP may try again; 0 when neither is blocked. */
  retryAfterMs(account: string, ip: string): number {
    const at = this.now();
    return Math.max(this.blockedFor(accountKey(account), this.limits.perAccount, at), this.blockedFor(ipKey(ip), this.limits.perIp, at));
  }

  /** Counts one failed attempt against both the account and the IP. */
  recordFailure(account: string, ip: string): void {
    const at = this.now();
    this.add(accountKey(account), this.limits.perAccount, at);
    this.add(ipKey(ip), this.limits.perIp, at);
  }

  /** A successful sign-in clears the account's count (not the IP's: one good password must not reset a spray). */
  recordSuccess(account: string): void {
    this.failures.delete(accountKey(account));
  }

  private recent(key: string, at: number): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    const kept = times.filter((t) => at - t < this.limits.windowMs);
    if (kept.length === 0) this.failures.delete(key);
    else if (kept.length !== times.length) this.failures.set(key, kept);
    return kept;
  }

  private blockedFor(key: string, limit: number, at: number): number {
    const times = this.recent(key, at);
    if (times.length < limit) return 0;
    return times[times.length - limit]! + this.limits.windowMs - at;
  }

  private add(key: string, limit: number, at: number): void {
    const times = this.recent(key, at);
    times.push(at);
    // Only the newest `limit` failures decide anything.
    if (times.length > limit) times.splice(0, times.length - limit);
    this.failures.delete(key);
    this.failures.set(key, times);
    if (this.failures.size > MAX_TRACKED_KEYS) this.evict(at);
  }

  // Drops expired keys; if all are recent, the least recently failed (Map order) go first.
  private evict(at: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, at);
    for (const key of this.failures.keys()) {
      if (this.failures.size <= MAX_TRACKED_KEYS) break;
      this.failures.delete(key);
    }
  }
}

const accountKey = (email: string): string => `a:${email.toLowerCase()}`;
const ipKey = (ip: string): string => `i:${ip}`;
