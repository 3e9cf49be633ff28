import { CompiledQuery, type Kysely } from 'kysely';
import type { RateLimitRepo, RateLimitVerdict } from './rate-limit-records.js';
import type { Database } from './schema.js';

// The sliding window of rate-limit-records.ts, decided inside the database: the upsert's SET
// expressions read the row as it is when the statement holds its lock, on PostgreSQL (a racing
// statement waits and re-reads the row) as on SQLite (one writer), so the check and the count
// are one atomic step and the nodes of a cluster add up to the limit exactly.
//
// It runs on every request of a rate-limited tunnel, so its SQL is written out once per engine
// rather than built by Kysely each time (building it cost more CPU than the rest of the round
// trip). Numbers are cast to bigint: products of a count (≤ 1e6) and a window (≤ 8.64e7 ms) need
// 64 bits, and PostgreSQL cannot type untyped parameters in arithmetic.

/** Parameters, in order: {1} stored key, {2} window index, {3} the previous window's, {4} W − elapsed, {5} W, {6} count·W, {7} expiry. */
const TAKE_SQL = `
insert into rate_limits ("key", window_index, in_window, in_previous, allowed, expires_at)
values ({1}, cast({2} as bigint), 1, 0, 1, cast({7} as bigint))
on conflict ("key") do update set
  window_index = case when rate_limits.window_index > cast({2} as bigint) then rate_limits.window_index else cast({2} as bigint) end,
  in_previous = {PREVIOUS},
  in_window = {CURRENT} + case when {OK} then 1 else 0 end,
  allowed = case when {OK} then 1 else 0 end,
  expires_at = case when rate_limits.window_index > cast({2} as bigint) then rate_limits.expires_at else cast({7} as bigint) end
returning window_index, in_window, in_previous, allowed`;
// A row from a later window (another node's clock runs ahead) is counted as it stands rather than reset.
const CURRENT = '(case when rate_limits.window_index >= cast({2} as bigint) then rate_limits.in_window else 0 end)';
const PREVIOUS =
  '(case when rate_limits.window_index >= cast({2} as bigint) then rate_limits.in_previous when rate_limits.window_index = cast({3} as bigint) then rate_limits.in_window else 0 end)';
const OK = `(${PREVIOUS} * cast({4} as bigint) + (${CURRENT} + 1) * cast({5} as bigint) <= cast({6} as bigint))`;
const TEMPLATE = TAKE_SQL.replaceAll('{OK}', OK).replaceAll('{PREVIOUS}', PREVIOUS).replaceAll('{CURRENT}', CURRENT);

/** The statement for one engine: PostgreSQL numbers its parameters ($1, reusable), SQLite takes one `?` per use. */
function compileTake(numbered: boolean): { text: string; order: number[] } {
  const order: number[] = [];
  const text = TEMPLATE.replace(/\{(\d)\}/g, (_, digit: string) => {
    if (numbered) return `$${digit}`;
    order.push(Number(digit));
    return '?';
  });
  return { text, order: numbered ? [1, 2, 3, 4, 5, 6, 7] : order };
}

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

interface TakeRow {
  window_index: number | string;
  in_window: number | string;
  in_previous: number | string;
  allowed: number | string;
}

/** The rate limit repo over a Kysely database (either engine). */
export function createRateLimitRepo(db: Kysely<Database>): RateLimitRepo {
  // Which engine: Kysely's PostgreSQL dialect numbers parameters, its SQLite one does not.
  const numbered = db.selectFrom('rate_limits').select('key').where('key', '=', '').compile().sql.includes('$1');
  const take = compileTake(numbered);
  return {
    async take(key, count, windowMs, now): Promise<RateLimitVerdict> {
      const window = Math.floor(now / windowMs);
      const values = [
        `${windowMs}/${key}`,
        window,
        window - 1,
        windowMs - (now - window * windowMs),
        windowMs,
        count * windowMs,
        (window + 2) * windowMs,
      ];
      const result = await db.executeQuery<TakeRow>(
        CompiledQuery.raw(
          take.text,
          take.order.map((n) => values[n - 1]),
        ),
      );
      const row = result.rows[0]!;
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
