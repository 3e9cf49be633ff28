import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Plan, Store } from '../store/index.js';
import { UsageLedger, type AccountMeter, type Batch } from './usage-ledger.js';

/** Pauses between the final flush's attempts while the store refuses it: 100 ms doubling to 1 s. */
const FINAL_RETRY_FIRST_MS = 100;
const FINAL_RETRY_MAX_MS = 1000;

/** What the meter needs; everything but the store and plan lookups has a default. */
export interface UsageMeterOptions {
  store: Store;
  limitsFor(plan: Plan): { bandwidthBytes: number };
  /** The account's plan, undefined for an unknown account (looked up on warm and refresh). */
  accountPlan(accountId: string): Promise<Plan | undefined>;
  log: Logger;
  /** Clock, ms since the epoch. Default Date.now; tests pass a fake. */
  now?: () => number;
  /** Default 1000 ms. */
  flushIntervalMs?: number;
  /** How often plans and stored totals of recently active accounts are re-read. Default 60 s. */
  refreshIntervalMs?: number;
  /** Live tunnels per account, sampled for the daily peak. */
  liveTunnels?: () => Iterable<readonly [accountId: string, count: number]>;
  /**
   * A number that changes whenever a tunnel is bound: the peak can only rise then, so the counts
   * are sampled only when it changed or a day began. Absent: sampled at every flush.
   */
  tunnelsBound?: () => number;
  /** After each committed flush: an account's stored month total and its quota (webhooks' usage.threshold). Off the request path. */
  onMonthTotal?: (accountId: string, month: string, bytes: number, limitBytes: number) => void;
}

/**
 * Meters transfer per account in memory and flushes it to the store. Long-lived state.
 *
 * What counts as transfer: body bytes through the edge for the account's tunnels, both
 * directions — visitor request bodies going up and response bodies coming down, and for
 * upgraded connections (WebSocket) every byte both ways after the handshake. Request and
 * response heads (start line, headers) and the edge's own pages (offline, 429, 502) do not
 * count, nor does the tunnel's framing. Months and days are UTC calendar units: the quota
 * resets at 00:00 UTC on the first of each month.
 *
 * Crash safety: bytes are counted in memory and flushed on an interval (and at stop) in ONE
 * store transaction per batch. A batch leaves memory only after its commit succeeds; a failed
 * flush keeps it and retries it, as the same batch under the same flush id. The store records
 * the id in the same transaction as the increments, so a retry of a batch whose commit did
 * succeed (an error reported after COMMIT, e.g. a dropped PostgreSQL connection) is skipped.
 * A crash loses only what was not committed: the bytes since the last successful flush, at
 * most one interval plus one flush's duration on a healthy store; nothing is replayed after
 * a restart, so nothing is ever counted twice.
 *
 * Concurrency: every store call (flush, warm, refresh) runs on one promise chain, so a base
 * total read from the store and the in-memory remainder always describe the same moment.
 */
export class UsageMeter {
  private readonly ledger: UsageLedger;
  private readonly now: () => number;
  /** A batch sent to the store whose commit is not confirmed. */
  private unconfirmed: Batch | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private lastFlushAt: number;
  private lastRefreshAt: number;
  private flushing = false;
  private failing = false;
  /** tunnelsBound() and the day's end when the peaks were last sampled. */
  private sampledBinds = NaN;
  private sampledDayEnd = NaN;

  constructor(private readonly opts: UsageMeterOptions) {
    this.now = opts.now ?? Date.now;
    this.ledger = new UsageLedger(this.now);
    this.lastFlushAt = this.now();
    this.lastRefreshAt = this.lastFlushAt;
  }

  /** Hot path: counts `bytes` of transfer for the account. No I/O, no allocation once known. */
  record(accountId: string, bytes: number): void {
    if (this.now() >= this.ledger.dayEndsAt) this.roll();
    const acc = this.ledger.accounts.get(accountId) ?? this.track(accountId);
    acc.bytes += bytes;
    acc.unflushed += bytes;
  }

  /** Counts one request for the daily and monthly rollups. */
  countRequest(accountId: string): void {
    (this.ledger.accounts.get(accountId) ?? this.track(accountId)).requests++;
  }

  /** Notes a concurrent tunnel count; the day's peak is the highest noted or sampled. */
  notePeakTunnels(accountId: string, count: number): void {
    // A note after midnight belongs to the new day, whose peak starts afresh.
    if (this.now() >= this.ledger.dayEndsAt) this.roll();
    this.ledger.notePeak(this.ledger.accounts.get(accountId) ?? this.track(accountId), count);
  }

  /** This month's bytes: the stored total as last known plus what is not flushed yet. */
  usedBytes(accountId: string): number {
    if (this.now() >= this.ledger.dayEndsAt) this.roll();
    const acc = this.ledger.accounts.get(accountId);
    return acc ? acc.stored + acc.unflushed : 0;
  }

  /** Like usedBytes, but first loads the account's stored total when this node does not know it. */
  async loadUsedBytes(accountId: string): Promise<number> {
    if (!this.ledger.accounts.has(accountId)) await this.warm(accountId);
    return this.usedBytes(accountId);
  }

  /** Whether the monthly quota is consumed (new agents and requests are refused). Cached: no I/O. */
  isOverQuota(accountId: string): boolean {
    if (this.now() >= this.ledger.dayEndsAt) this.roll();
    const acc = this.ledger.accounts.get(accountId) ?? this.track(accountId);
    acc.touched = true;
    return acc.stored + acc.unflushed >= acc.limit;
  }

  /**
   * Whether a transfer in flight must stop: true once the account's bytes exceed the quota.
   * The data path records each chunk and then asks this before forwarding it, so the chunk
   * that crosses the limit is the last one counted and is itself dropped.
   */
  shouldCutOff(accountId: string): boolean {
    const acc = this.ledger.accounts.get(accountId);
    if (!acc) return false;
    acc.touched = true;
    return acc.stored + acc.unflushed > acc.limit;
  }

  /** Loads the account's plan limit and stored month total (awaited at agent sign-in). */
  warm(accountId: string): Promise<void> {
    const acc = this.ledger.accounts.get(accountId) ?? this.ledger.create(accountId);
    return this.serial(() => this.load(accountId, acc));
  }

  /** Re-reads the plan limit and stored total of an account this node meters; others load on first use. */
  reload(accountId: string): Promise<void> {
    const acc = this.ledger.accounts.get(accountId);
    return acc ? this.serial(() => this.load(accountId, acc)) : Promise.resolve();
  }

  /** Milliseconds since the last successful flush (0 right after one). */
  flushLagMs(): number {
    return Math.max(0, this.now() - this.lastFlushAt);
  }

  /** Starts the flush loop. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.opts.flushIntervalMs ?? 1000);
    this.timer.unref();
  }

  /** Writes everything counted so far; rejects (keeping the counts) when the store fails. */
  flush(): Promise<void> {
    return this.serial(() => this.flushNow());
  }

  /**
   * Stops the loop and flushes what is left. A flush the store refuses is retried for up to
   * `retryForMs` (0: one attempt), then the last error is thrown with the counts still unwritten.
   */
  async stop({ retryForMs = 0 }: { retryForMs?: number } = {}): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const deadline = performance.now() + retryForMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.flush();
        return;
      } catch (error) {
        const pause = Math.min(FINAL_RETRY_MAX_MS, FINAL_RETRY_FIRST_MS * 2 ** attempt);
        if (performance.now() + pause > deadline) throw error;
        await delay(pause);
      }
    }
  }

  private tick(): void {
    if (this.flushing) return;
    this.flushing = true;
    const refreshDue = this.now() - this.lastRefreshAt >= (this.opts.refreshIntervalMs ?? 60_000);
    void this.flush()
      .then(() => (refreshDue ? this.refresh() : undefined))
      .then(
        () => {
          if (this.failing) this.opts.log.info('usage flush recovered');
          this.failing = false;
        },
        (error: unknown) => {
          if (!this.failing) this.opts.log.error({ err: error }, 'usage flush failed; counts kept for the next flush');
          this.failing = true;
        },
      )
      .finally(() => (this.flushing = false));
  }

  /** Notes each account's live tunnels, unless nothing was bound since the last sample this day. */
  private samplePeaks(): void {
    const binds = this.opts.tunnelsBound?.();
    if (binds !== undefined && binds === this.sampledBinds && this.ledger.dayEndsAt === this.sampledDayEnd) return;
    for (const [accountId, count] of this.opts.liveTunnels?.() ?? []) this.notePeakTunnels(accountId, count);
    this.sampledBinds = binds ?? NaN;
    this.sampledDayEnd = this.ledger.dayEndsAt;
  }

  private roll(): void {
    // A new month also re-reads every account soon: other nodes may have counted already.
    if (this.ledger.roll()) this.lastRefreshAt = -Infinity;
  }

  private async flushNow(): Promise<void> {
    if (this.now() >= this.ledger.dayEndsAt) this.roll();
    this.samplePeaks();
    if (this.unconfirmed) await this.write(this.unconfirmed);
    const batch = this.ledger.takeBatch();
    if (batch) {
      this.unconfirmed = batch;
      await this.write(batch);
    }
    this.lastFlushAt = this.now();
  }

  private async write(batch: Batch): Promise<void> {
    const totals = await this.opts.store.usage.applyDeltas(batch.deltas, batch.flushId);
    // Committed: only now do the counts leave memory (synchronously with the new totals).
    this.unconfirmed = undefined;
    this.ledger.settle(batch, totals);
    const report = this.opts.onMonthTotal;
    if (report) {
      for (const t of totals) {
        const acc = this.ledger.accounts.get(t.accountId);
        if (acc && t.month === this.ledger.month) report(t.accountId, t.month, t.bytes, acc.limit);
      }
    }
  }

  /** An account first seen on the request path: counted at once, its limit and total loaded behind. */
  private track(accountId: string): AccountMeter {
    const acc = this.ledger.create(accountId);
    void this.serial(() => this.load(accountId, acc)).catch((error: unknown) =>
      this.opts.log.error({ err: error, accountId }, 'could not load account usage'),
    );
    return acc;
  }

  private async load(accountId: string, acc: AccountMeter): Promise<void> {
    const month = this.ledger.month;
    const plan = await this.opts.accountPlan(accountId);
    const stored = await this.opts.store.usage.monthBytes(accountId, month);
    acc.limit = plan === undefined ? Infinity : this.opts.limitsFor(plan).bandwidthBytes;
    // A month that ended meanwhile already reset the account; the old total does not apply.
    if (month === this.ledger.month) acc.stored = stored;
  }

  /** Re-reads plans and totals of accounts used since the last refresh (other nodes, plan changes). */
  private refresh(): Promise<void> {
    this.lastRefreshAt = this.now();
    const due = [...this.ledger.accounts].filter(([, acc]) => acc.touched);
    for (const [, acc] of due) acc.touched = false;
    return this.serial(async () => {
      for (const [accountId, acc] of due) await this.load(accountId, acc);
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }
}
