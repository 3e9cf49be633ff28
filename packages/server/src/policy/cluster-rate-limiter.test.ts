import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ClusterRateLimiter,
  MAX_REMEMBERED_REFUSALS,
  REPORT_INTERVAL_MS,
  SWEEP_INTERVAL_MS,
  type SharedRateCounter,
} from './cluster-rate-limiter.js';

// The store's counter is this unit's collaborator: a scripted stand-in records what it is asked.
// The counting itself is the store contract's (store/rate-limits.contract.ts), on SQLite and
// PostgreSQL, and the whole path is test/e2e/policy-rate-limit-cluster.test.ts.

const LIMIT = { count: 3, windowMs: 60_000 };

function scriptedCounter(answer: (key: string) => { allowed: boolean; retryAfterMs: number } | Error) {
  const takes: string[] = [];
  const sweeps: number[] = [];
  const counter: SharedRateCounter = {
    take: async (key, count, windowMs) => {
      takes.push(`${key} ${count}/${windowMs}`);
      const verdict = answer(key);
      if (verdict instanceof Error) throw verdict;
      return verdict;
    },
    sweep: async (now) => {
      sweeps.push(now);
      return 0;
    },
  };
  return { counter, takes, sweeps };
}

test('asks the shared counter, and answers true when it allows', async () => {
  const { counter, takes } = scriptedCounter(() => ({ allowed: true, retryAfterMs: 0 }));
  const limiter = new ClusterRateLimiter({ counter });
  assert.equal(await limiter.take('a.localhost 10.0.0.1', LIMIT, 1_000), true);
  assert.deepEqual(takes, ['a.localhost 10.0.0.1 3/60000']);
});

test('remembers a refusal until the wait it named, answering from memory meanwhile', async () => {
  const { counter, takes } = scriptedCounter(() => ({ allowed: false, retryAfterMs: 12_500 }));
  const limiter = new ClusterRateLimiter({ counter });
  assert.equal(await limiter.take('k', LIMIT, 1_000), 13);
  // Answered at once, without the store, with the time left.
  assert.equal(limiter.take('k', LIMIT, 5_000), 9);
  assert.equal(limiter.take('k', LIMIT, 13_499), 1);
  assert.equal(takes.length, 1);
  // Another limit on the same key is not the remembered refusal; nor is the key once the wait is over.
  assert.equal(await limiter.take('k', { count: 10, windowMs: 60_000 }, 5_000), 13);
  assert.equal(await limiter.take('k', LIMIT, 13_500), 13);
  assert.equal(takes.length, 3);
});

test('counts on this node alone while the store cannot answer, and says so once per interval', async () => {
  const errors: unknown[] = [];
  const { counter } = scriptedCounter(() => new Error('connection terminated'));
  const limiter = new ClusterRateLimiter({ counter, onError: (err) => errors.push(err) });
  const verdicts = [];
  for (let i = 0; i < 4; i++) verdicts.push(await limiter.take('k', LIMIT, 1_000 + i));
  assert.deepEqual(verdicts.slice(0, 3), [true, true, true]);
  assert.equal(typeof verdicts[3], 'number');
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /connection terminated/);
  await limiter.take('other', LIMIT, 1_000 + REPORT_INTERVAL_MS);
  assert.equal(errors.length, 2);
});

test('sweeps the store once per interval, and a failed sweep only reports', async () => {
  const errors: unknown[] = [];
  const { counter, sweeps } = scriptedCounter(() => ({ allowed: true, retryAfterMs: 0 }));
  counter.sweep = async (now) => {
    sweeps.push(now);
    throw new Error('sweep failed');
  };
  const limiter = new ClusterRateLimiter({ counter, onError: (err) => errors.push(err) });
  const start = SWEEP_INTERVAL_MS * 10;
  assert.equal(await limiter.take('k', LIMIT, start), true);
  assert.equal(await limiter.take('k', LIMIT, start + SWEEP_INTERVAL_MS - 1), true);
  assert.equal(await limiter.take('k', LIMIT, start + SWEEP_INTERVAL_MS), true);
  assert.deepEqual(sweeps, [start, start + SWEEP_INTERVAL_MS]);
  // Both failures reported: they are a minute apart.
  assert.equal(errors.length, 2);
});

test(`remembers at most ${MAX_REMEMBERED_REFUSALS} refusals, the oldest going first`, async () => {
  const { counter, takes } = scriptedCounter(() => ({ allowed: false, retryAfterMs: 30_000 }));
  const limiter = new ClusterRateLimiter({ counter });
  for (let i = 0; i <= MAX_REMEMBERED_REFUSALS; i++) await limiter.take(`visitor-${i}`, LIMIT, 1_000);
  assert.equal(limiter.rememberedRefusals, MAX_REMEMBERED_REFUSALS);
  // The first was forgotten: asked of the store again. The last is still remembered.
  await limiter.take('visitor-0', LIMIT, 2_000);
  assert.equal(limiter.take(`visitor-${MAX_REMEMBERED_REFUSALS}`, LIMIT, 2_000), 29);
  assert.equal(takes.length, MAX_REMEMBERED_REFUSALS + 2);
});
