import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { RateLimitRepo, RateLimitVerdict } from './rate-limit-records.js';
import type { Database } from './schema.js';

// The sliding window of rate-limit-records.ts, decided inside the database: the upsert's SET
// expressions read the row as it is when the statement holds its lock, on PostgreSQL (a racing
// statement waits and re-reads the row) as on SQLite (one writer), so the check and the count
// are one atomic step and the nodes of a cluster add up to the limit exactly. Every number is
// cast to bigint: PostgreSQL cannot type untyped parameters in arithmetic, and products of a
// count (≤ 1e6) and a window (≤ 8.64e7 ms) need 64 bits.

const big = (value: number): RawBuilder<number> => sql<number>`cast(${value} as bigint)`;
const column = (name: 'window_index' | 'in_window' | 'in_previous' | 'expires_at'): RawBuilder<number> =>
  sql<number>`${sql.ref(`rate_limits.${name}`)}`;

/**
 * The smallest wait after which a refused key would be allowed again, counting on nobody taking
 * one meanwhile: later in this window as the previous window's weight fades, or in the next one,
 * where this window's count becomes the weighted one.
 */
export function retryAfterMs(count: number, windowMs: number, window: number, inWindow: number, inPrevious: number, now: number): number {
  const windowStart = window * windowMs;
  const elapsed = Math.min(Math.max(now - windowStart, 0), windowMs);
  // Allowed when inPrevious·(W − e) + (inWindow + 1)·W ≤ count·W.
  if (inWindow + 1 <= count && inPrevious > 0) {
    const needed = windowMs - Math.floor(((count - inWindow - 1) * windowMs) / inPrevious);
    if (needed < windowMs) return Math.max(needed - elapsed, 1);
  }
  // In the next window: inWindow·(W − e') + W ≤ count·W.
  const neededNext = inWindow === 0 ? 0 : Math.max(windowMs - Math.floor(((count - 1) * windowMs) / inWindow), 0);
  return Math.max(windowStart + windowMs + neededNext - now, 1);
}

/** The rate limit repo over a Kysely database (either engine). */
export function createRateLimitRepo(db: Kysely<Database>): RateLimitRepo {
  return {
    async take(key, count, windowMs, now): Promise<RateLimitVerdict> {
      const window = Math.floor(now / windowMs);
      const elapsed = now - window * windowMs;
      // A row from a later window (another node's clock runs ahead) is counted as it stands rather than reset.
      const sameOrLater = sql<boolean>`${column('window_index')} >= ${big(window)}`;
      const inWindow = sql<number>`(case when ${sameOrLater} then ${column('in_window')} else 0 end)`;
      const inPrevious = sql<number>`(case when ${sameOrLater} then ${column('in_previous')} when ${column('window_index')} = ${big(window - 1)} then ${column('in_window')} else 0 end)`;
      const ok = sql<boolean>`(${inPrevious} * ${big(windowMs - elapsed)} + (${inWindow} + 1) * ${big(windowMs)} <= ${big(count * windowMs)})`;
      const later = sql<boolean>`${column('window_index')} > ${big(window)}`;
      const row = await db
        .insertInto('rate_limits')
        // The first request of a key is always allowed: the limit is at least 1.
        .values({
          key: `${windowMs}/${key}`,
          window_index: window,
          in_window: 1,
          in_previous: 0,
          allowed: 1,
          expires_at: (window + 2) * windowMs,
        })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            window_index: sql<number>`(case when ${later} then ${column('window_index')} else ${big(window)} end)`,
            in_previous: inPrevious,
            in_window: sql<number>`${inWindow} + (case when ${ok} then 1 else 0 end)`,
            allowed: sql<number>`(case when ${ok} then 1 else 0 end)`,
            expires_at: sql<number>`(case when ${later} then ${column('expires_at')} else ${big((window + 2) * windowMs)} end)`,
          }),
        )
        .returning(['window_index', 'in_window', 'in_previous', 'allowed'])
        .executeTakeFirstOrThrow();
      if (Number(row.allowed) === 1) return { allowed: true, retryAfterMs: 0 };
      return {
        allowed: false,
        retryAfterMs: retryAfterMs(count, windowMs, Number(row.window_index), Number(row.in_window), Number(row.in_previous), now),
      };
    },

    async sweep(now) {
      const result = await db.deleteFrom('rate_limits').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
