import assert from 'node:assert/strict';
import { test } from 'node:test';
import { acmeChallengeToken } from './acme-http01.js';
import { OrderLimiter } from './acme-limiter.js';

const MINUTE_MS = 60_000;

test('a failed host waits 5, then 15, then 60 minutes between attempts', () => {
  let clock = 1_000_000;
  const limiter = new OrderLimiter({ now: () => clock });
  const waits: number[] = [];
  for (let i = 0; i < 4; i++) {
    assert.equal(limiter.tryStart('a.example.com').ok, true);
    const retryAt = limiter.failed('a.example.com');
    waits.push((retryAt - clock) / MINUTE_MS);
    const refused = limiter.tryStart('a.example.com');
    assert.ok(!refused.ok && refused.reason === 'backoff' && refused.retryAt === retryAt);
    clock = retryAt - 1;
    assert.equal(limiter.tryStart('a.example.com').ok, false);
    clock = retryAt;
  }
  assert.deepEqual(waits, [5, 15, 60, 60]);
});

test("a success clears the host's backoff; other hosts are never held back by it", () => {
  let clock = 1_000_000;
  const limiter = new OrderLimiter({ now: () => clock });
  limiter.tryStart('a.example.com');
  limiter.failed('a.example.com');
  assert.equal(limiter.tryStart('b.example.com').ok, true);
  clock += 5 * MINUTE_MS;
  assert.equal(limiter.tryStart('a.example.com').ok, true);
  limiter.succeeded('a.example.com');
  limiter.failed('a.example.com');
  assert.equal(limiter.tryStart('a.example.com').ok, false);
  clock += 5 * MINUTE_MS; // back to the first step, not the second
  assert.equal(limiter.tryStart('a.example.com').ok, true);
});

test('at most maxPerMinute orders start in any rolling minute', () => {
  let clock = 1_000_000;
  const limiter = new OrderLimiter({ maxPerMinute: 3, now: () => clock });
  for (const h of ['a', 'b', 'c']) assert.equal(limiter.tryStart(`${h}.example.com`).ok, true);
  const refused = limiter.tryStart('d.example.com');
  assert.ok(!refused.ok && refused.reason === 'rate' && refused.retryAt === 1_000_000 + MINUTE_MS);
  clock += MINUTE_MS - 1;
  assert.equal(limiter.tryStart('d.example.com').ok, false);
  clock += 1;
  assert.equal(limiter.tryStart('d.example.com').ok, true);
});

test('acmeChallengeToken accepts only base64url tokens under the well-known path', () => {
  const token = 'LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0';
  assert.equal(acmeChallengeToken(`/.well-known/acme-challenge/${token}`), token);
  assert.equal(acmeChallengeToken(`/.well-known/acme-challenge/${token}?x=1`), token);
  for (const bad of [
    '/',
    '/.well-known/acme-challenge/',
    '/.well-known/acme-challenge/../etc/passwd',
    `/x/.well-known/acme-challenge/${token}`,
    '/.well-known/acme-challenge/short',
  ]) {
    assert.equal(acmeChallengeToken(bad), undefined, bad);
  }
});
