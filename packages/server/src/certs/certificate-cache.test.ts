import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSecureContext } from 'node:tls';
import { CertificateCache, REFRESH_BEFORE_EXPIRY_MS, type CachedCertificate } from './certificate-cache.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A loader that counts its calls and returns a fresh context valid for `days`. */
function countingLoader(now: () => number, days = 90): { load: () => Promise<CachedCertificate>; calls: () => number } {
  let calls = 0;
  return {
    load: async () => {
      calls += 1;
      return { context: createSecureContext(), notAfter: new Date(now() + days * DAY_MS) };
    },
    calls: () => calls,
  };
}

test('concurrent lookups for one hostname share a single load', async () => {
  const cache = new CertificateCache();
  const loader = countingLoader(Date.now);
  const contexts = await Promise.all(Array.from({ length: 50 }, () => cache.get('abc.localhost', loader.load)));
  assert.equal(loader.calls(), 1);
  assert.equal(new Set(contexts).size, 1);
  assert.equal(await cache.get('abc.localhost', loader.load), contexts[0]);
  assert.equal(loader.calls(), 1);
});

test('a failed load is shared by its waiters and not cached', async () => {
  const cache = new CertificateCache();
  let calls = 0;
  const failing = async (): Promise<CachedCertificate> => {
    calls += 1;
    throw new Error('mint failed');
  };
  const results = await Promise.allSettled([cache.get('a.localhost', failing), cache.get('a.localhost', failing)]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  assert.equal(calls, 1);
  await assert.rejects(cache.get('a.localhost', failing), /mint failed/);
  assert.equal(calls, 2);
  assert.equal(cache.size, 0);
});

test('a loader that throws synchronously does not leave its hostname stuck', async () => {
  const cache = new CertificateCache();
  const throwsAtOnce = (() => {
    throw new Error('sync');
  }) as unknown as () => Promise<CachedCertificate>;
  await assert.rejects(cache.get('a.localhost', throwsAtOnce), /sync/);
  const loader = countingLoader(Date.now);
  assert.ok(await cache.get('a.localhost', loader.load));
  assert.equal(loader.calls(), 1);
});

test('an empty load result is not cached', async () => {
  const cache = new CertificateCache();
  let calls = 0;
  const none = async (): Promise<undefined> => {
    calls += 1;
    return undefined;
  };
  assert.equal(await cache.get('x.example', none), undefined);
  assert.equal(await cache.get('x.example', none), undefined);
  assert.equal(calls, 2);
});

test('the cache holds at most maxEntries and drops the least recently used', async () => {
  const cache = new CertificateCache({ maxEntries: 3 });
  const loader = countingLoader(Date.now);
  for (const host of ['a', 'b', 'c']) await cache.get(host, loader.load);
  cache.peek('a'); // a is now more recent than b
  await cache.get('d', loader.load);
  assert.equal(cache.size, 3);
  assert.ok(cache.peek('a'));
  assert.equal(cache.peek('b'), undefined);
  assert.ok(cache.peek('c'));
  assert.ok(cache.peek('d'));
});

test('an entry is reloaded once it is within the refresh margin of expiry', async () => {
  let clock = Date.parse('2030-01-01T00:00:00Z');
  const cache = new CertificateCache({ now: () => clock });
  const loader = countingLoader(() => clock, 90);
  const first = await cache.get('a.localhost', loader.load);
  clock += 90 * DAY_MS - REFRESH_BEFORE_EXPIRY_MS - 1;
  assert.equal(await cache.get('a.localhost', loader.load), first);
  clock += 1;
  const second = await cache.get('a.localhost', loader.load);
  assert.notEqual(second, first);
  assert.equal(loader.calls(), 2);
});

test('a certificate that arrives close to expiry is still kept for half its remaining life', async () => {
  let clock = Date.parse('2030-01-01T00:00:00Z');
  const cache = new CertificateCache({ now: () => clock });
  const loader = countingLoader(() => clock, 2); // 2 days left, less than the 7-day margin
  await cache.get('a.localhost', loader.load);
  clock += DAY_MS - 1;
  await cache.get('a.localhost', loader.load);
  assert.equal(loader.calls(), 1);
});

test('delete during a load keeps the loaded context out of the cache', async () => {
  const cache = new CertificateCache();
  const loader = countingLoader(Date.now);
  const pending = cache.get('a.localhost', loader.load);
  cache.delete('a.localhost');
  assert.ok(await pending);
  assert.equal(cache.size, 0);
});
