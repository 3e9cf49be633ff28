import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Store } from './store.js';

// The acme_challenges and acme_order_leases part of the Store contract, called from inside
// runStoreContract, which owns the store.

/** Registers the shared HTTP-01 answer and order lease contract tests; `store()` is read inside each test. */
export function runAcmeSharedContract(store: () => Store): void {
  const unique = (): string => randomBytes(12).toString('base64url');
  const T = 1_800_000_000_000;

  describe('shared acme challenges', () => {
    it('putChallenge then challenge round-trips until it expires; put again replaces', async () => {
      const token = unique();
      assert.equal(await store().acmeShared.challenge(token, T), undefined);
      await store().acmeShared.putChallenge({ token, keyAuthorization: `${token}.one`, expiresAt: T + 1000 });
      assert.equal(await store().acmeShared.challenge(token, T), `${token}.one`);
      assert.equal(await store().acmeShared.challenge(token, T + 1000), undefined, 'expired at expiresAt');
      await store().acmeShared.putChallenge({ token, keyAuthorization: `${token}.two`, expiresAt: T + 5000 });
      assert.equal(await store().acmeShared.challenge(token, T + 1000), `${token}.two`);
    });

    it('deleteChallenge removes one answer and leaves the others', async () => {
      const [a, b] = [unique(), unique()];
      await store().acmeShared.putChallenge({ token: a, keyAuthorization: 'ka-a', expiresAt: T });
      await store().acmeShared.putChallenge({ token: b, keyAuthorization: 'ka-b', expiresAt: T });
      await store().acmeShared.deleteChallenge(a);
      await store().acmeShared.deleteChallenge(a);
      assert.equal(await store().acmeShared.challenge(a, 0), undefined);
      assert.equal(await store().acmeShared.challenge(b, 0), 'ka-b');
    });

    it('deleteExpiredChallenges removes only the expired ones', async () => {
      // Far in the past, so answers other tests stored never fall in the window.
      const base = 1_000_000 + Math.floor(Math.random() * 1_000_000);
      const [old, fresh] = [unique(), unique()];
      await store().acmeShared.putChallenge({ token: old, keyAuthorization: 'old', expiresAt: base });
      await store().acmeShared.putChallenge({ token: fresh, keyAuthorization: 'fresh', expiresAt: T });
      assert.ok((await store().acmeShared.deleteExpiredChallenges(base)) >= 1);
      assert.equal(await store().acmeShared.challenge(old, 0), undefined);
      assert.equal(await store().acmeShared.challenge(fresh, 0), 'fresh');
    });
  });

  describe('acme order leases', () => {
    const host = (): string => `lease-${randomBytes(5).toString('hex')}.example.com`;

    it('one node holds the lease until it releases it or it expires', async () => {
      const h = host();
      const shared = store().acmeShared;
      assert.equal(await shared.orderHolder(h, T), undefined);
      assert.equal(await shared.acquireOrder(h, 'node-a', T, T + 1000), true);
      assert.equal(await shared.orderHolder(h, T + 999), 'node-a');
      assert.equal(await shared.orderHolder(h, T + 1000), undefined, 'expired');
      assert.equal(await shared.acquireOrder(h.toUpperCase(), 'node-b', T + 999, T + 2000), false);
      await shared.releaseOrder(h, 'node-b');
      assert.equal(await shared.acquireOrder(h, 'node-b', T + 1, T + 2000), false, 'a release by another node does nothing');
      assert.equal(await shared.acquireOrder(h, 'node-b', T + 1000, T + 3000), true, 'expired: taken over');
      assert.equal(await shared.acquireOrder(h, 'node-a', T + 1001, T + 4000), false);
      await shared.releaseOrder(h, 'node-b');
      assert.equal(await shared.orderHolder(h, T + 1002), undefined);
      assert.equal(await shared.acquireOrder(h, 'node-a', T + 1002, T + 4000), true, 'released: free');
    });

    it('the holder takes its own lease again (its previous run died mid-order)', async () => {
      const h = host();
      assert.equal(await store().acmeShared.acquireOrder(h, 'node-a', T, T + 1000), true);
      assert.equal(await store().acmeShared.acquireOrder(h, 'node-a', T + 1, T + 2000), true);
      assert.equal(await store().acmeShared.acquireOrder(h, 'node-b', T + 1500, T + 3000), false, 'renewed to T + 2000');
    });

    it('of nodes racing for one free lease exactly one gets it', async () => {
      const h = host();
      const nodes = Array.from({ length: 8 }, (_, i) => `node-${i}`);
      const won = await Promise.all(nodes.map((n) => store().acmeShared.acquireOrder(h, n, T, T + 1000)));
      assert.equal(won.filter(Boolean).length, 1);
    });
  });
}
