import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { IdTable } from './id-table.js';

/** A seeded generator, so a failing sequence can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function assertSame(table: IdTable<string>, model: Map<number, string>, probes: number[]): void {
  assert.equal(table.size, model.size);
  for (const id of probes) {
    assert.equal(table.get(id), model.get(id), `get(${id})`);
    assert.equal(table.has(id), model.has(id), `has(${id})`);
  }
  assert.deepEqual(table.snapshot().sort(), [...model.values()].sort());
}

describe('IdTable', () => {
  test('agrees with a Map over random adds, replaces and removes, through growth and shrinking', () => {
    for (const seed of [1, 2, 3]) {
      const next = random(seed);
      const table = new IdTable<string>(4);
      const model = new Map<number, string>();
      // Ids cluster like a session's (odd and even, growing) and sometimes jump far.
      let base = 1;
      for (let i = 0; i < 20_000; i++) {
        const roll = next();
        // Phases: mostly adds (grow to ~2,000), then mostly removes (shrink), then mixed.
        const addBias = i < 6_000 ? 0.8 : i < 12_000 ? 0.2 : 0.5;
        if (roll < addBias) {
          base += 1 + Math.floor(next() * 3);
          const id = next() < 0.05 ? 1 + Math.floor(next() * 0xfffffffe) : base;
          table.set(id, `v${id}:${i}`);
          model.set(id, `v${id}:${i}`);
        } else {
          const keys = [...model.keys()];
          const id = keys.length > 0 && next() < 0.9 ? keys[Math.floor(next() * keys.length)]! : base + 7;
          assert.equal(table.delete(id), model.delete(id), `delete(${id}) at step ${i}`);
        }
        if (i % 997 === 0) assertSame(table, model, [...model.keys(), base + 1, 0xffffffff, 1]);
      }
      assertSame(table, model, [...model.keys()]);
    }
  });

  test('replaces the value of an id already present', () => {
    const table = new IdTable<string>();
    table.set(7, 'a');
    table.set(7, 'b');
    assert.equal(table.size, 1);
    assert.equal(table.get(7), 'b');
  });

  test('add() hands out ids not in use', () => {
    const table = new IdTable<string>();
    table.set(1, 'taken');
    table.set(2, 'taken');
    assert.equal(table.add('x'), 3);
    assert.equal(table.add('y'), 4);
    assert.equal(table.get(3), 'x');
    assert.equal(table.delete(3), true);
    assert.equal(table.add('z'), 5, 'ids count up rather than reuse the one just freed');
  });

  test('rejects ids outside 1 to 2^32-1 and answers for them as absent', () => {
    const table = new IdTable<string>();
    for (const id of [0, -1, 2 ** 32, 1.5, Number.NaN]) {
      assert.throws(() => table.set(id, 'x'), /invalid id/);
      assert.equal(table.get(id), undefined);
      assert.equal(table.has(id), false);
      assert.equal(table.delete(id), false);
    }
    assert.equal(table.size, 0);
    assert.throws(() => new IdTable(12), /not a power of two/);
  });

  test('clear() empties the table, which stays usable', () => {
    const table = new IdTable<string>(2);
    for (let id = 1; id <= 100; id++) table.set(id, String(id));
    table.clear();
    assert.equal(table.size, 0);
    assert.equal(table.get(50), undefined);
    table.set(50, 'again');
    assert.deepEqual(table.snapshot(), ['again']);
  });

  // Why the table exists (see the comment in id-table.ts). This measures the old generation,
  // not time: after a full GC, a Map that churns keeps every value it held alive until the
  // next full GC, so the old generation fills with dead values; the table's values die young.
  test('values removed after a full GC still die young (a Map of the same churn does not)', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const oldSpaceUsed = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;

    function growthUnderChurn(store: { set(id: number, value: object): unknown; delete(id: number): unknown }): number {
      gc();
      const start = oldSpaceUsed();
      let peak = start;
      for (let id = 1; id <= 200_000; id++) {
        // ~0.5 KB per value, 50 alive at a time: a session's requests in flight.
        store.set(id, { id, body: new Array(60).fill(id) });
        if (id > 50) store.delete(id - 50);
        if (id % 5_000 === 0) peak = Math.max(peak, oldSpaceUsed());
      }
      return peak - start;
    }

    const MiB = 1024 * 1024;
    const mapGrowth = growthUnderChurn(new Map());
    const tableGrowth = growthUnderChurn(new IdTable());
    assert.ok(
      mapGrowth > 8 * MiB,
      `the probe should see a Map's values promoted (old space grew ${(mapGrowth / MiB).toFixed(1)} MiB); if V8 no longer does this, revisit id-table.ts`,
    );
    assert.ok(tableGrowth < 2 * MiB, `old space grew ${(tableGrowth / MiB).toFixed(1)} MiB under churn`);
  });
});
