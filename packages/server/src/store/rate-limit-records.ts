/** What one counted request came to: allowed, or refused with how long until one would be allowed. */
export interface RateLimitVerdict {
  allowed: boolean;
  /** 0 when allowed; else milliseconds until a request of this key would be allowed, if nobody else takes one meanwhile. */
  retryAfterMs: number;
}

/**
 * Request counters shared by the nodes of a cluster: a sliding window per key, estimated from two
 * fixed windows (the current one's count plus the previous one's, weighted by how much of it the
 * sliding window still covers). A request is allowed when that estimate, itself included, is at
 * most the limit; only allowed requests are counted. Each take is one statement on the key's row,
 * so requests racing on several nodes are counted one after the other and never pass together.
 */
export interface RateLimitRepo {
  /** Counts one request of `key` against `count` per `windowMs` at `now`. */
  take(key: string, count: number, windowMs: number, now: number): Promise<RateLimitVerdict>;
  /** Deletes the counters whose two windows have both passed at `now`; returns how many. */
  sweep(now: number): Promise<number>;
}
