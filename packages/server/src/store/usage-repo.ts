import type { Kysely, Transaction } from 'kysely';
import type { Database, UsageDailyTable, UsageMonthlyTable } from './schema.js';
import type { MonthTotal, UsageDelta, UsageRepo } from './usage-records.js';

/** Rows per upsert statement (5 parameters each). */
const UPSERT_CHUNK_ROWS = 500;
/**
 * How long an applied flush id is remembered. A flush is only ever retried by the process
 * that made it, while it runs, so this only has to outlast a store outage.
 */
export const FLUSH_ID_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Sums deltas per (account, day) and per (account, month), and sorts both by key. Summing
 * matters on PostgreSQL (one INSERT … ON CONFLICT may not touch a row twice); sorting makes
 * concurrent flushes of several nodes lock rows in the same order, so they cannot deadlock.
 */
function merge(deltas: readonly UsageDelta[]): { daily: UsageDailyTable[]; monthly: UsageMonthlyTable[] } {
  const daily = new Map<string, UsageDailyTable>();
  const monthly = new Map<string, UsageMonthlyTable>();
  for (const d of deltas) {
    if (!DAY_RE.test(d.day) || d.month !== d.day.slice(0, 7)) throw new RangeError(`bad usage day/month: ${d.day} / ${d.month}`);
    if (d.bytes === 0 && d.requests === 0 && d.peakTunnels === 0) continue;
    const dayKey = `${d.accountId}\u0000${d.day}`;
    const day = daily.get(dayKey);
    if (day) {
      day.bytes += d.bytes;
      day.requests += d.requests;
      day.peak_tunnels = Math.max(day.peak_tunnels, d.peakTunnels);
    } else {
      daily.set(dayKey, { account_id: d.accountId, day: d.day, bytes: d.bytes, requests: d.requests, peak_tunnels: d.peakTunnels });
    }
    const monthKey = `${d.accountId}\u0000${d.month}`;
    const month = monthly.get(monthKey);
    if (month) {
      month.bytes += d.bytes;
      month.requests += d.requests;
    } else {
      monthly.set(monthKey, { account_id: d.accountId, month: d.month, bytes: d.bytes, requests: d.requests });
    }
  }
  const sorted = <T>(m: Map<string, T>): T[] => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  return { daily: sorted(daily), monthly: sorted(monthly) };
}

function chunks<T>(rows: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += UPSERT_CHUNK_ROWS) out.push(rows.slice(i, i + UPSERT_CHUNK_ROWS));
  return out;
}

async function readTotals(trx: Transaction<Database>, keys: UsageMonthlyTable[]): Promise<MonthTotal[]> {
  const totals: MonthTotal[] = [];
  for (const key of keys) {
    const row = await trx
      .selectFrom('usage_monthly')
      .select(['bytes', 'requests'])
      .where('account_id', '=', key.account_id)
      .where('month', '=', key.month)
      .executeTakeFirst();
    totals.push({ accountId: key.account_id, month: key.month, bytes: row?.bytes ?? 0, requests: row?.requests ?? 0 });
  }
  return totals;
}

/** The usage repo over a Kysely database (either engine). */
export function createUsageRepo(db: Kysely<Database>, now: () => number): UsageRepo {
  return {
    async applyDeltas(deltas, flushId) {
      const { daily, monthly } = merge(deltas);
      if (monthly.length === 0) return [];
      return db.transaction().execute(async (trx) => {
        if (flushId !== undefined) {
          // Recording the id is the first write, in the same transaction as the increments:
          // either both commit or neither does, so an id on record means "already counted".
          const claimed = await trx
            .insertInto('usage_flushes')
            .values({ id: flushId, applied_at: now() })
            .onConflict((oc) => oc.column('id').doNothing())
            .executeTakeFirst();
          if (Number(claimed.numInsertedOrUpdatedRows ?? 0n) === 0) return readTotals(trx, monthly);
          await trx
            .deleteFrom('usage_flushes')
            .where('applied_at', '<', now() - FLUSH_ID_RETENTION_MS)
            .execute();
        }
        for (const rows of chunks(daily)) {
          await trx
            .insertInto('usage_daily')
            .values(rows)
            .onConflict((oc) =>
              oc.columns(['account_id', 'day']).doUpdateSet((eb) => ({
                bytes: eb('usage_daily.bytes', '+', eb.ref('excluded.bytes')),
                requests: eb('usage_daily.requests', '+', eb.ref('excluded.requests')),
                // max() is spelled differently on the two engines; CASE is portable.
                peak_tunnels: eb
                  .case()
                  .when(eb.ref('excluded.peak_tunnels'), '>', eb.ref('usage_daily.peak_tunnels'))
                  .then(eb.ref('excluded.peak_tunnels'))
                  .else(eb.ref('usage_daily.peak_tunnels'))
                  .end(),
              })),
            )
            .execute();
        }
        const totals: MonthTotal[] = [];
        for (const rows of chunks(monthly)) {
          const stored = await trx
            .insertInto('usage_monthly')
            .values(rows)
            .onConflict((oc) =>
              oc.columns(['account_id', 'month']).doUpdateSet((eb) => ({
                bytes: eb('usage_monthly.bytes', '+', eb.ref('excluded.bytes')),
                requests: eb('usage_monthly.requests', '+', eb.ref('excluded.requests')),
              })),
            )
            .returning(['account_id', 'month', 'bytes', 'requests'])
            .execute();
          for (const r of stored) totals.push({ accountId: r.account_id, month: r.month, bytes: r.bytes, requests: r.requests });
        }
        return totals;
      });
    },

    async monthBytes(accountId, month) {
      const row = await db
        .selectFrom('usage_monthly')
        .select('bytes')
        .where('account_id', '=', accountId)
        .where('month', '=', month)
        .executeTakeFirst();
      return row?.bytes ?? 0;
    },

    async history(accountId, range = {}) {
      let q = db.selectFrom('usage_daily').selectAll().where('account_id', '=', accountId);
      if (range.from !== undefined) q = q.where('day', '>=', range.from);
      if (range.to !== undefined) q = q.where('day', '<=', range.to);
      const rows = await q.orderBy('day', 'desc').execute();
      return rows.map((r) => ({ day: r.day, bytes: r.bytes, requests: r.requests, peakTunnels: r.peak_tunnels }));
    },
  };
}
