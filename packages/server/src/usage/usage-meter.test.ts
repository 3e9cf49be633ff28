import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { openStore, type Plan, type Store, type UsageRepo } from '../store/index.js';
import { UsageMeter } from './usage-meter.js';

// The meter against a real SQLite store, a fake clock, and a fault switch around the real
// usage repo: 'fail' rejects before writing, 'lost-ack' commits and then reports failure
// (what a connection dropped after COMMIT looks like).

const LIMIT = 1000;
const log = pino({ level: 'silent' });
const at = (iso: string): number => Date.parse(iso);

describe('UsageMeter', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-usage-'));
    store = await openStore({ dataDir: dir });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function setup(startIso = '2025-03-10T12:00:00.000Z', plan: Plan = 'free') {
    let clock = at(startIso);
    const fault: { mode: 'ok' | 'fail' | 'lost-ack'; calls: number; during?: () => void } = { mode: 'ok', calls: 0 };
    const usage: UsageRepo = {
      ...store.usage,
      async applyDeltas(deltas, flushId) {
        fault.calls++;
        fault.during?.();
        if (fault.mode === 'fail') throw new Error('store unavailable');
        const totals = await store.usage.applyDeltas(deltas, flushId);
        if (fault.mode === 'lost-ack') throw new Error('connection lost after commit');
        return totals;
      },
    };
    const account = await store.accounts.create({ email: `m-${Math.random().toString(36).slice(2)}@example.com`, name: 'M', plan });
    const meter = new UsageMeter({
      store: { ...store, usage },
      limitsFor: (p) => ({ bandwidthBytes: p === 'free' ? LIMIT : LIMIT * 10 }),
      accountPlan: async (id) => (await store.accounts.byId(id))?.plan,
      log,
      now: () => clock,
    });
    await meter.warm(account.id);
    return {
      meter,
      fault,
      id: account.id,
      setClock: (iso: string) => (clock = at(iso)),
      advance: (ms: number) => (clock += ms),
    };
  }

  it('flush writes the month total and daily rollup; usedBytes is stored plus unflushed throughout', async () => {
    const { meter, id } = await setup();
    meter.record(id, 300);
    meter.record(id, 200);
    meter.countRequest(id);
    assert.equal(meter.usedBytes(id), 500);
    await meter.flush();
    assert.equal(meter.usedBytes(id), 500);
    meter.record(id, 5);
    assert.equal(meter.usedBytes(id), 505);
    assert.equal(await store.usage.monthBytes(id, '2025-03'), 500);
    assert.deepEqual(await store.usage.history(id), [{ day: '2025-03-10', bytes: 500, requests: 1, peakTunnels: 0 }]);
  });

  it('isOverQuota once the quota is consumed; shouldCutOff only past it', async () => {
    const { meter, id } = await setup();
    meter.record(id, LIMIT - 1);
    assert.equal(meter.isOverQuota(id), false);
    meter.record(id, 1);
    assert.equal(meter.isOverQuota(id), true);
    assert.equal(meter.shouldCutOff(id), false);
    meter.record(id, 1);
    assert.equal(meter.shouldCutOff(id), true);
  });

  it('warm loads the plan limit and the stored month total (a restart)', async () => {
    const first = await setup('2025-03-10T12:00:00.000Z', 'pro');
    first.meter.record(first.id, LIMIT * 5);
    await first.meter.stop();
    const again = new UsageMeter({
      store,
      limitsFor: (p) => ({ bandwidthBytes: p === 'free' ? LIMIT : LIMIT * 10 }),
      accountPlan: async (id) => (await store.accounts.byId(id))?.plan,
      log,
      now: () => at('2025-03-11T00:00:00.000Z'),
    });
    await again.warm(first.id);
    assert.equal(again.usedBytes(first.id), LIMIT * 5);
    assert.equal(again.isOverQuota(first.id), false);
    await store.accounts.setPlan(first.id, 'free');
    await again.warm(first.id);
    assert.equal(again.isOverQuota(first.id), true);
  });

  it('a new UTC month resets the quota; each side of midnight is stored under its own day and month', async () => {
    const { meter, id, setClock } = await setup('2025-01-31T23:59:59.000Z');
    meter.record(id, LIMIT);
    assert.equal(meter.isOverQuota(id), true);
    setClock('2025-02-01T00:00:00.000Z');
    assert.equal(meter.isOverQuota(id), false);
    assert.equal(meter.usedBytes(id), 0);
    meter.record(id, 40);
    assert.equal(meter.usedBytes(id), 40);
    await meter.flush();
    assert.equal(await store.usage.monthBytes(id, '2025-01'), LIMIT);
    assert.equal(await store.usage.monthBytes(id, '2025-02'), 40);
    assert.deepEqual(
      (await store.usage.history(id)).map((d) => [d.day, d.bytes]),
      [
        ['2025-02-01', 40],
        ['2025-01-31', LIMIT],
      ],
    );
    assert.equal(meter.usedBytes(id), 40);
  });

  it('a failed flush keeps the counts in memory and writes them on the next flush', async () => {
    const { meter, id, fault } = await setup();
    meter.record(id, 700);
    fault.mode = 'fail';
    await assert.rejects(meter.flush(), /store unavailable/);
    assert.equal(meter.usedBytes(id), 700);
    assert.equal(meter.isOverQuota(id), false);
    meter.record(id, 300);
    assert.equal(meter.isOverQuota(id), true, 'unflushed bytes still count against the quota');
    fault.mode = 'ok';
    await meter.flush();
    assert.equal(await store.usage.monthBytes(id, '2025-03'), 1000);
    assert.equal(meter.usedBytes(id), 1000);
  });

  it('never counts twice when a commit succeeded but was reported failed', async () => {
    const { meter, id, fault } = await setup();
    meter.record(id, 400);
    fault.mode = 'lost-ack';
    await assert.rejects(meter.flush(), /after commit/);
    assert.equal(await store.usage.monthBytes(id, '2025-03'), 400, 'the first attempt did commit');
    assert.equal(meter.usedBytes(id), 400);
    fault.mode = 'ok';
    meter.record(id, 1);
    await meter.flush();
    // The retried batch (same flush id) was recognised; only the new byte was added.
    assert.equal(await store.usage.monthBytes(id, '2025-03'), 401);
    assert.equal(meter.usedBytes(id), 401);
  });

  it('bytes counted while a flush is in flight are neither lost nor counted twice', async () => {
    const { meter, id, fault } = await setup();
    meter.record(id, 100);
    // Runs after the batch was taken and before its commit.
    fault.during = () => meter.record(id, 50);
    await meter.flush();
    fault.during = undefined;
    assert.equal(meter.usedBytes(id), 150);
    assert.equal(await store.usage.monthBytes(id, '2025-03'), 100);
    await meter.flush();
    assert.equal(await store.usage.monthBytes(id, '2025-03'), 150);
  });

  it('requests and peak tunnels (noted and sampled) reach the daily rollup', async () => {
    const { meter, id } = await setup();
    let live = 2;
    const sampled = new UsageMeter({
      store,
      limitsFor: () => ({ bandwidthBytes: LIMIT }),
      accountPlan: async () => 'free',
      log,
      now: () => at('2025-04-02T08:00:00.000Z'),
      liveTunnels: () => [[id, live]],
    });
    sampled.countRequest(id);
    sampled.countRequest(id);
    sampled.notePeakTunnels(id, 3);
    await sampled.flush();
    live = 5;
    await sampled.stop();
    assert.deepEqual(await store.usage.history(id, { from: '2025-04-02' }), [{ day: '2025-04-02', bytes: 0, requests: 2, peakTunnels: 5 }]);
    await meter.stop();
  });

  it('samples the live tunnels only after a bind or when a day begins, not at every flush', async () => {
    let clock = at('2025-06-02T08:00:00.000Z');
    let binds = 0;
    let samples = 0;
    const { meter: other, id } = await setup();
    await other.stop();
    const meter = new UsageMeter({
      store,
      limitsFor: () => ({ bandwidthBytes: LIMIT }),
      accountPlan: async () => 'free',
      log,
      now: () => clock,
      liveTunnels: () => {
        samples++;
        return [[id, 1 + binds]];
      },
      tunnelsBound: () => binds,
    });
    for (let i = 0; i < 4; i++) await meter.flush();
    assert.equal(samples, 1, 'nothing was bound after the first sample');
    binds++;
    await meter.flush();
    await meter.flush();
    assert.equal(samples, 2, 'a bind brings one more sample');
    clock = at('2025-06-03T00:00:01.000Z');
    await meter.flush();
    assert.equal(samples, 3, 'a new day samples its own peak');
    await meter.stop();
    assert.deepEqual(
      (await store.usage.history(id, { from: '2025-06-02' })).map((day) => [day.day, day.peakTunnels]),
      [
        ['2025-06-03', 2],
        ['2025-06-02', 2],
      ],
    );
  });

  it('idle tunnels cost no store write per flush: only a new high of the day is sent, and each new day once', async () => {
    const { meter, fault, id, setClock } = await setup('2025-05-02T08:00:00.000Z');
    meter.notePeakTunnels(id, 4);
    await meter.flush();
    assert.equal(fault.calls, 1);
    for (let i = 0; i < 5; i++) {
      meter.notePeakTunnels(id, 4);
      meter.notePeakTunnels(id, 2);
      await meter.flush();
    }
    assert.equal(fault.calls, 1, 'a peak no higher than the one sent today is not written again');
    meter.notePeakTunnels(id, 6);
    await meter.flush();
    assert.equal(fault.calls, 2);
    setClock('2025-05-03T00:00:01.000Z');
    meter.notePeakTunnels(id, 3);
    await meter.flush();
    assert.equal(fault.calls, 3, 'a new day starts its own peak');
    assert.deepEqual(await store.usage.history(id, { from: '2025-05-02' }), [
      { day: '2025-05-03', bytes: 0, requests: 0, peakTunnels: 3 },
      { day: '2025-05-02', bytes: 0, requests: 0, peakTunnels: 6 },
    ]);
    await meter.stop();
  });

  it('flushLagMs grows while flushes fail and drops to zero after one succeeds', async () => {
    const { meter, id, fault, advance } = await setup();
    meter.record(id, 1);
    fault.mode = 'fail';
    advance(2500);
    await assert.rejects(meter.flush());
    assert.equal(meter.flushLagMs(), 2500);
    fault.mode = 'ok';
    await meter.flush();
    assert.equal(meter.flushLagMs(), 0);
  });

  it('stop flushes what is left', async () => {
    const { meter, id } = await setup();
    meter.record(id, 77);
    await meter.stop();
    assert.equal(await store.usage.monthBytes(id, '2025-03'), 77);
  });

  it('an account first seen on the data path is counted at once and its limit loaded behind', async () => {
    const { meter } = await setup();
    const other = await store.accounts.create({ email: `late-${Date.now()}@example.com`, name: 'L', plan: 'free' });
    meter.record(other.id, LIMIT + 1);
    assert.equal(meter.shouldCutOff(other.id), false, 'limit unknown until loaded');
    await meter.warm(other.id);
    assert.equal(meter.shouldCutOff(other.id), true);
    assert.equal(await meter.loadUsedBytes(other.id), LIMIT + 1);
  });
});
