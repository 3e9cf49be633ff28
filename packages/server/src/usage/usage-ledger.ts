import { randomBytes } from 'node:crypto';
import type { MonthTotal, UsageDelta } from '../store/index.js';
import { utcDay, utcDayEnd } from './calendar.js';

/** What this node knows about one account's usage. */
export interface AccountMeter {
  /** Monthly limit in bytes; Infinity until the plan is known. */
  limit: number;
  /** The account's stored total for the current month, as last read or returned by a flush. */
  stored: number;
  /** Current-month bytes counted here whose commit is not confirmed yet. */
  unflushed: number;
  /** Counts of the current day not yet taken into a batch. */
  bytes: number;
  requests: number;
  peakTunnels: number;
  /**
   * The highest peak of the current day already taken into a batch. The store keeps the day's
   * maximum, so a peak no higher is not sent again: an account whose tunnels sit idle costs no
   * store write per flush.
   */
  dayPeakTaken: number;
  /** Used since the last refresh. */
  touched: boolean;
}

/** Deltas sent to the store together, under one flush id. */
export interface Batch {
  flushId: string;
  deltas: UsageDelta[];
}

/**
 * The meter's in-memory bookkeeping, without I/O: per-account counts, the current UTC day
 * and month, days that ended before their counts were flushed, and settling a committed
 * batch. Synchronous on purpose: the meter calls it between awaits only.
 */
export class UsageLedger {
  readonly accounts = new Map<string, AccountMeter>();
  day: string;
  month: string;
  /** When the current UTC day ends; the hot path compares the clock against it. */
  dayEndsAt: number;
  /** Deltas of days that ended before they were taken into a batch. */
  private sealed: UsageDelta[] = [];

  constructor(private readonly now: () => number) {
    const at = now();
    this.day = utcDay(at);
    this.month = this.day.slice(0, 7);
    this.dayEndsAt = utcDayEnd(at);
  }

  /** A fresh entry: counted from now on, limit unknown. */
  create(accountId: string): AccountMeter {
    const acc: AccountMeter = {
      limit: Infinity,
      stored: 0,
      unflushed: 0,
      bytes: 0,
      requests: 0,
      peakTunnels: 0,
      dayPeakTaken: 0,
      touched: false,
    };
    this.accounts.set(accountId, acc);
    return acc;
  }

  /**
   * Moves to the clock's UTC day if it changed: the old day's counts are sealed under their
   * own day and month, and a new month starts every account's quota at zero. Returns
   * whether the month changed.
   */
  roll(): boolean {
    const at = this.now();
    this.dayEndsAt = utcDayEnd(at);
    const day = utcDay(at);
    if (day === this.day) return false;
    for (const [accountId, acc] of this.accounts) {
      this.take(accountId, acc, this.sealed);
      acc.dayPeakTaken = 0;
    }
    const month = day.slice(0, 7);
    const newMonth = month !== this.month;
    if (newMonth) {
      for (const acc of this.accounts.values()) {
        acc.stored = 0;
        acc.unflushed = 0;
        acc.touched = true;
      }
    }
    this.day = day;
    this.month = month;
    return newMonth;
  }

  /** Everything counted and not yet in a batch, as one new batch (undefined when nothing). */
  takeBatch(): Batch | undefined {
    const deltas = this.sealed;
    this.sealed = [];
    for (const [accountId, acc] of this.accounts) this.take(accountId, acc, deltas);
    return deltas.length === 0 ? undefined : { flushId: `flu_${randomBytes(10).toString('hex')}`, deltas };
  }

  /** A batch committed: its current-month bytes leave `unflushed`, the stored totals are the store's. */
  settle(batch: Batch, totals: readonly MonthTotal[]): void {
    for (const d of batch.deltas) {
      const acc = this.accounts.get(d.accountId);
      if (acc && d.month === this.month) acc.unflushed -= d.bytes;
    }
    for (const t of totals) {
      const acc = this.accounts.get(t.accountId);
      if (acc && t.month === this.month) acc.stored = t.bytes;
    }
  }

  /** Notes `count` live tunnels now; only a new high of the day is kept for the next batch. */
  notePeak(acc: AccountMeter, count: number): void {
    if (count > acc.peakTunnels && count > acc.dayPeakTaken) acc.peakTunnels = count;
  }

  private take(accountId: string, acc: AccountMeter, into: UsageDelta[]): void {
    if (acc.bytes === 0 && acc.requests === 0 && acc.peakTunnels === 0) return;
    if (acc.peakTunnels > acc.dayPeakTaken) acc.dayPeakTaken = acc.peakTunnels;
    into.push({ accountId, month: this.month, day: this.day, bytes: acc.bytes, requests: acc.requests, peakTunnels: acc.peakTunnels });
    acc.bytes = 0;
    acc.requests = 0;
    acc.peakTunnels = 0;
  }
}
