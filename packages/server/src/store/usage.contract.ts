import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Account, Store } from './store.js';
import type { UsageDelta } from './usage-records.js';

// UsageRepo part of the Store contract; runStoreContract calls it inside its suite.

/** Registers the usage contract tests. */
export function runUsageContract(store: () => Store, newAccount: () => Promise<Account>): void {
  const flushId = (): string => `flu_${randomBytes(8).toString('hex')}`;
  const delta = (accountId: string, day: string, over: Partial<UsageDelta> = {}): UsageDelta => ({
    accountId,
    day,
    month: day.slice(0, 7),
    bytes: 0,
    requests: 0,
    peakTunnels: 0,
    ...over,
  });

  describe('usage', () => {
    it('applyDeltas creates monthly and daily rows and returns the month totals', async () => {
      const a = await newAccount();
      const totals = await store().usage.applyDeltas([
        delta(a.id, '2025-03-01', { bytes: 100, requests: 2, peakTunnels: 1 }),
        delta(a.id, '2025-03-02', { bytes: 50, requests: 1, peakTunnels: 3 }),
      ]);
      assert.deepEqual(totals, [{ accountId: a.id, month: '2025-03', bytes: 150, requests: 3 }]);
      assert.equal(await store().usage.monthBytes(a.id, '2025-03'), 150);
      assert.deepEqual(await store().usage.history(a.id), [
        { day: '2025-03-02', bytes: 50, requests: 1, peakTunnels: 3 },
        { day: '2025-03-01', bytes: 100, requests: 2, peakTunnels: 1 },
      ]);
    });

    it('applyDeltas adds to existing rows; peak tunnels keep the maximum', async () => {
      const a = await newAccount();
      await store().usage.applyDeltas([delta(a.id, '2025-04-10', { bytes: 5_000_000_000, requests: 1, peakTunnels: 4 })]);
      const totals = await store().usage.applyDeltas([delta(a.id, '2025-04-10', { bytes: 7, requests: 2, peakTunnels: 2 })]);
      assert.deepEqual(totals, [{ accountId: a.id, month: '2025-04', bytes: 5_000_000_007, requests: 3 }]);
      assert.deepEqual(await store().usage.history(a.id), [{ day: '2025-04-10', bytes: 5_000_000_007, requests: 3, peakTunnels: 4 }]);
      await store().usage.applyDeltas([delta(a.id, '2025-04-10', { peakTunnels: 9 })]);
      assert.equal((await store().usage.history(a.id))[0]?.peakTunnels, 9);
    });

    it('deltas for the same key in one call are summed', async () => {
      const a = await newAccount();
      await store().usage.applyDeltas([
        delta(a.id, '2025-05-01', { bytes: 1, peakTunnels: 2 }),
        delta(a.id, '2025-05-01', { bytes: 2, peakTunnels: 1 }),
      ]);
      assert.deepEqual(await store().usage.history(a.id), [{ day: '2025-05-01', bytes: 3, requests: 0, peakTunnels: 2 }]);
    });

    it('a flush id is applied once: the same id again changes nothing', async () => {
      const a = await newAccount();
      const id = flushId();
      const deltas = [delta(a.id, '2025-06-01', { bytes: 10, requests: 1 })];
      const first = await store().usage.applyDeltas(deltas, id);
      const again = await store().usage.applyDeltas(deltas, id);
      assert.deepEqual(again, first);
      assert.equal(await store().usage.monthBytes(a.id, '2025-06'), 10);
      await store().usage.applyDeltas(deltas, flushId());
      assert.equal(await store().usage.monthBytes(a.id, '2025-06'), 20);
    });

    it('a failed flush leaves nothing behind, its id included, so a retry applies', async () => {
      const a = await newAccount();
      const id = flushId();
      const good = delta(a.id, '2025-07-01', { bytes: 10, requests: 1 });
      const bad = delta(a.id, '2025-07-02', { bytes: Number.NaN });
      await assert.rejects(store().usage.applyDeltas([good, bad], id));
      assert.equal(await store().usage.monthBytes(a.id, '2025-07'), 0);
      assert.deepEqual(await store().usage.history(a.id), []);
      await store().usage.applyDeltas([good], id);
      assert.equal(await store().usage.monthBytes(a.id, '2025-07'), 10);
    });

    it('rejects a day that does not belong to its month', async () => {
      const a = await newAccount();
      await assert.rejects(store().usage.applyDeltas([{ ...delta(a.id, '2025-08-01', { bytes: 1 }), month: '2025-09' }]), RangeError);
    });

    it('concurrent flushes for one account add up', async () => {
      const a = await newAccount();
      await Promise.all(
        Array.from({ length: 10 }, () => store().usage.applyDeltas([delta(a.id, '2025-09-01', { bytes: 3, requests: 1 })], flushId())),
      );
      assert.equal(await store().usage.monthBytes(a.id, '2025-09'), 30);
      assert.equal((await store().usage.history(a.id))[0]?.requests, 10);
    });

    it('history filters by inclusive from/to, per account; monthBytes is 0 without a row', async () => {
      const a = await newAccount();
      const b = await newAccount();
      await store().usage.applyDeltas([
        ...['2025-10-30', '2025-10-31', '2025-11-01', '2025-11-02'].map((day) => delta(a.id, day, { bytes: 1 })),
        delta(b.id, '2025-10-31', { bytes: 1 }),
      ]);
      const days = async (from?: string, to?: string) => (await store().usage.history(a.id, { from, to })).map((d) => d.day);
      assert.deepEqual(await days('2025-10-31', '2025-11-01'), ['2025-11-01', '2025-10-31']);
      assert.deepEqual(await days('2025-11-02'), ['2025-11-02']);
      assert.deepEqual(await days(undefined, '2025-10-30'), ['2025-10-30']);
      assert.equal(await store().usage.monthBytes(a.id, '2025-10'), 2);
      assert.equal(await store().usage.monthBytes(a.id, '2024-01'), 0);
    });
  });
}
