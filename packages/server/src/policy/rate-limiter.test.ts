import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LocalRateLimiter } from './rate-limiter.js';

const limit = { count: 3, windowMs: 60_000 };

test('the limiter allows count requests in a window, then answers seconds to wait', () => {
  const limiter = new LocalRateLimiter();
  const t0 = 120_000;
  assert.equal(limiter.take('a', limit, t0), true);
  assert.equal(limiter.take('a', limit, t0 + 1), true);
  assert.equal(limiter.take('a', limit, t0 + 2), true);
  const wait = limiter.take('a', limit, t0 + 3);
  assert.equal(typeof wait, 'number');
  assert.ok((wait as number) >= 1 && (wait as number) <= 120, String(wait));
  // Another visitor has a budget of its own.
  assert.equal(limiter.take('b', limit, t0 + 4), true);
});

test('the window slides: the previous window still counts for the part it overlaps', () => {
  const limiter = new LocalRateLimiter();
  const t0 = 0;
  for (let i = 0; i < 3; i++) assert.equal(limiter.take('a', limit, t0 + i), true);
  // 10 s into the next window the previous 3 still weigh 2.5: no room.
  assert.equal(typeof limiter.take('a', limit, 70_000), 'number');
  // 50 s in they weigh 0.5: room for two.
  assert.equal(limiter.take('a', limit, 110_000), true);
  assert.equal(limiter.take('a', limit, 110_001), true);
  assert.equal(typeof limiter.take('a', limit, 110_002), 'number');
  // Two windows later, the slate is clean.
  assert.equal(limiter.take('a', limit, 240_000), true);
});

test('a refused request is not counted, and the Retry-After is honest', () => {
  const limiter = new LocalRateLimiter();
  const one = { count: 1, windowMs: 10_000 };
  assert.equal(limiter.take('a', one, 0), true);
  const wait = limiter.take('a', one, 1000) as number;
  for (let i = 0; i < 50; i++) limiter.take('a', one, 1000 + i);
  assert.equal(limiter.take('a', one, 1000 + wait * 1000), true);
});

test('memory stays bounded: idle keys are swept and the oldest go past the cap', () => {
  const limiter = new LocalRateLimiter(100);
  for (let i = 0; i < 1000; i++) limiter.take(`ip-${i}`, limit, 0);
  assert.ok(limiter.size <= 100, String(limiter.size));
  // Keys idle for two windows go at the next sweep.
  limiter.take('late', limit, 0);
  for (let i = 0; i < 5000; i++) limiter.take('late', { count: 1_000_000, windowMs: 60_000 }, 200_000);
  assert.equal(limiter.size, 1);
});
