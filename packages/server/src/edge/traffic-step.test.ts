import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileTraffic, type RateLimiter } from '../policy/index.js';
import { EdgeExchange, type VisitorWriter } from './exchange.js';
import type { EdgePage } from './pages.js';
import type { Binding } from './router.js';
import { passOn } from './traffic-step.js';

/** An exchange on a binding with `policy`, its pages and whether it was forwarded recorded. */
function setUp(policy: Parameters<typeof compileTraffic>[0], limiter: RateLimiter) {
  const observed: number[] = [];
  const exchange = new EdgeExchange(
    { host: 'a.example', method: 'GET', path: '/x', ip: '192.0.2.1', userAgent: '', proto: 'HTTP/1.1', secure: true, absolute: undefined },
    { observe: (finished) => observed.push(finished.status), meter: undefined },
  );
  const pages: EdgePage[] = [];
  exchange.respondThrough({ sendPage: (page: EdgePage) => pages.push(page) } as unknown as VisitorWriter);
  const traffic = compileTraffic(policy, { limiter })!;
  exchange.binding = { hostname: 'a.example', traffic } as unknown as Binding;
  let forwarded = 0;
  const visitor = { forward: () => void forwarded++ };
  return { exchange, pages, observed, visitor, forwarded: () => forwarded };
}

const limit = { rateLimit: { count: 1, windowMs: 60_000 } };

test('a limiter that answers later lets the request on, or refuses it with its Retry-After, recorded', async () => {
  let answer: true | number = true;
  const keys: string[] = [];
  const limiter: RateLimiter = { take: (key) => (keys.push(key), Promise.resolve(answer)) };
  const allowed = setUp(limit, limiter);
  assert.equal(typeof passOn(allowed.exchange, [], allowed.visitor, undefined), 'function');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(allowed.forwarded(), 1);
  assert.deepEqual(keys, ['a.example 192.0.2.1']);
  answer = 42;
  const refused = setUp(limit, limiter);
  passOn(refused.exchange, [], refused.visitor, undefined);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(refused.forwarded(), 0);
  assert.equal(refused.pages[0]!.status, 429);
  assert.equal(refused.pages[0]!.headers['retry-after'], '42');
  assert.deepEqual(refused.observed, [429]);
});

test('a limiter that fails answers 503, never lets the request through uncounted', async () => {
  const failing = setUp(limit, { take: () => Promise.reject(new Error('store down')) });
  passOn(failing.exchange, [], failing.visitor, undefined);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(failing.forwarded(), 0);
  assert.equal(failing.pages[0]!.status, 503);
});

test('a visitor gone while the limiter answers is not forwarded, and is recorded once', async () => {
  const gone = setUp(limit, { take: () => Promise.resolve(true) });
  const leave = passOn(gone.exchange, [], gone.visitor, undefined)!;
  leave();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(gone.forwarded(), 0);
  assert.deepEqual(gone.observed, [0]);
});

test('without a verifier, a webhook check refuses; a tunnel without traffic rules is forwarded at once', async () => {
  const hooked = setUp({ verifyWebhook: { provider: 'github', secret: 's', maxBody: 10 } }, { take: () => true });
  passOn(hooked.exchange, [], hooked.visitor, undefined);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(hooked.pages[0]!.status, 403);
  assert.match(hooked.pages[0]!.body, /signature mismatch/);
  const plain = setUp(limit, { take: () => true });
  plain.exchange.binding = { hostname: 'a.example' } as unknown as Binding;
  assert.equal(passOn(plain.exchange, [], plain.visitor, undefined), undefined);
  assert.equal(plain.forwarded(), 1);
});
