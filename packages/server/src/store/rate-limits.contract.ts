import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Store } from './store.js';

// The rate_limits part of the Store contract: one statement per request decides and counts, so
// requests racing on several connections (several nodes) never pass the limit together. Called
// from inside runStoreContract, which owns the store; times are explicit, not the store's clock.

const WINDOW_MS = 60_000;
/** A window boundary: window arithmetic below starts from it. */
const BASE = 29_000_000 * WINDOW_MS;

/** Registers the rate limit contract tests; `store()` is read inside each test. */
export function runRateLimitContract(store: () => Store): void {
  const key = (): string => `host-${randomBytes(4).toString('hex')}.localhost/127.0.0.1`;
  const takeAll = async (k: string, times: number, count: number, at: number) => {
    const verdicts = [];
    for (let i = 0; i < times; i++) verdicts.push(await store().rateLimits.take(k, count, WINDOW_MS, at));
    return verdicts;
  };

  describe('rate limits', () => {
    it('allows exactly the limit, then refuses with the wait until the next allowed request', async () => {
      const k = key();
      const verdicts = await takeAll(k, 7, 5, BASE + 1000);
      assert.deepEqual(
        verdicts.map((v) => v.allowed),
        [true, true, true, true, true, false, false],
      );
      // Next window, once the first window's weight has faded to 4/5: 60 s − 1 s + 12 s.
      assert.equal(verdicts[5]?.retryAfterMs, 71_000);
      // Another key, and the same key under another window length, are counted apart.
      assert.equal((await store().rateLimits.take(key(), 5, WINDOW_MS, BASE + 1000)).allowed, true);
      assert.equal((await store().rateLimits.take(k, 5, 30_000, BASE + 1000)).allowed, true);
    });

    it('lets exactly the limit through of many requests racing at once', async () => {
      const k = key();
      const verdicts = await Promise.all(Array.from({ length: 30 }, () => store().rateLimits.take(k, 10, WINDOW_MS, BASE + 5000)));
      assert.equal(verdicts.filter((v) => v.allowed).length, 10);
    });

    it('slides: the previous window counts by the part of it still inside the window, and the wait it names is exact', async () => {
      // Five requests late in one window; in the next, the sixth is allowed exactly when the
      // weighted count plus itself reaches five again, and not a millisecond earlier.
      for (const [refusedAt, allowedAt] of [
        [BASE + 71_999, BASE + 72_000],
        [BASE + 60_000, BASE + 72_000],
      ] as const) {
        const early = key();
        await takeAll(early, 5, 5, BASE + 59_000);
        const refused = await store().rateLimits.take(early, 5, WINDOW_MS, refusedAt);
        assert.equal(refused.allowed, false);
        assert.equal(refusedAt + refused.retryAfterMs, allowedAt);
        const onTime = key();
        await takeAll(onTime, 5, 5, BASE + 59_000);
        assert.equal((await store().rateLimits.take(onTime, 5, WINDOW_MS, allowedAt)).allowed, true);
      }
    });

    it('does not count refused requests, and forgets a key after two idle windows', async () => {
      const k = key();
      await takeAll(k, 12, 3, BASE + 1000);
      // Two thirds into the next window the first one weighs a third of its 3 allowed (not of 12 asked): two more pass.
      const next = await takeAll(k, 3, 3, BASE + WINDOW_MS + 40_000);
      assert.deepEqual(
        next.map((v) => v.allowed),
        [true, true, false],
      );
      // After two windows without a request nothing is left: the full limit again.
      const later = await takeAll(k, 4, 3, BASE + 3 * WINDOW_MS + 1000);
      assert.deepEqual(
        later.map((v) => v.allowed),
        [true, true, true, false],
      );
    });

    it('within one window, a limit of one waits for the previous request to fade out', async () => {
      const k = key();
      assert.equal((await store().rateLimits.take(k, 1, WINDOW_MS, BASE + 30_000)).allowed, true);
      const refused = await store().rateLimits.take(k, 1, WINDOW_MS, BASE + 40_000);
      assert.equal(refused.allowed, false);
      // Next window starts at +60 s; the previous window's single request weighs 1 until +120 s.
      assert.equal(refused.retryAfterMs, 80_000);
      assert.equal((await store().rateLimits.take(k, 1, WINDOW_MS, BASE + 119_999)).allowed, false);
      assert.equal((await store().rateLimits.take(k, 1, WINDOW_MS, BASE + 120_000)).allowed, true);
    });

    it('keeps counting when a node with a slower clock takes a request of a later window', async () => {
      const k = key();
      await takeAll(k, 3, 3, BASE + WINDOW_MS + 10);
      // This node still thinks it is the previous window: the row is not reset.
      assert.equal((await store().rateLimits.take(k, 3, WINDOW_MS, BASE + WINDOW_MS - 10)).allowed, false);
      assert.equal((await store().rateLimits.take(k, 3, WINDOW_MS, BASE + WINDOW_MS + 20)).allowed, false);
    });

    it('sweeps the counters whose two windows have passed, and only those', async () => {
      const [old, fresh] = [key(), key()];
      const farAhead = BASE + 1000 * WINDOW_MS;
      await store().rateLimits.take(old, 2, WINDOW_MS, farAhead + 1000);
      await store().rateLimits.take(fresh, 2, WINDOW_MS, farAhead + 2 * WINDOW_MS + 1000);
      await store().rateLimits.take(fresh, 2, WINDOW_MS, farAhead + 2 * WINDOW_MS + 1000);
      assert.ok((await store().rateLimits.sweep(farAhead + 2 * WINDOW_MS + 1000)) >= 1);
      // The fresh key kept its count: a third request is refused.
      assert.equal((await store().rateLimits.take(fresh, 2, WINDOW_MS, farAhead + 2 * WINDOW_MS + 2000)).allowed, false);
      assert.equal(await store().rateLimits.sweep(farAhead + 2 * WINDOW_MS + 1000), 0);
    });
  });
}
