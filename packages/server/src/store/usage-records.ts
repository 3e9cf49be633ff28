// Metered usage as the store's contract shows it (usage_monthly, usage_daily, usage_flushes).

/** Increments for one account and one UTC day (and the month holding it). */
export interface UsageDelta {
  accountId: string;
  /** `YYYY-MM`, the month of `day`. */
  month: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  /** Bytes to add. */
  bytes: number;
  /** Requests to add. */
  requests: number;
  /** Highest concurrent tunnel count seen; the stored value becomes the max of both. */
  peakTunnels: number;
}

/** An account's total for one month, as stored after a flush. */
export interface MonthTotal {
  accountId: string;
  month: string;
  bytes: number;
  requests: number;
}

/** One daily rollup row. */
export interface DailyUsage {
  day: string;
  bytes: number;
  requests: number;
  peakTunnels: number;
}

export interface UsageRepo {
  /**
   * Adds the deltas to the monthly totals and daily rollups in ONE transaction (deltas for
   * the same key are summed first). With a `flushId`, the flush is applied at most once:
   * a second call with an id already applied changes nothing. Returns the month totals of
   * every (account, month) the deltas touch, as stored after the call.
   */
  applyDeltas(deltas: readonly UsageDelta[], flushId?: string): Promise<MonthTotal[]>;
  /** The account's stored bytes for `YYYY-MM`; 0 when there is no row. */
  monthBytes(accountId: string, month: string): Promise<number>;
  /** Daily rollups, newest first; `from`/`to` are inclusive `YYYY-MM-DD` bounds. */
  history(accountId: string, range?: { from?: string | undefined; to?: string | undefined }): Promise<DailyUsage[]>;
}
