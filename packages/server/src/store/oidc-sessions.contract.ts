import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Store } from './store.js';

// The single sign-on sessions part of the Store contract (revocations and signing keys), called
// from inside runStoreContract, which owns the store. Both engines hold the same rows.

/** Registers the revocation and signing key contract tests; `store()` is read inside each test. */
export function runOidcSessionsContract(store: () => Store): void {
  const unique = (): string => randomBytes(6).toString('hex');

  describe('single sign-on revocations and signing keys', () => {
    it('records a sign-out once, lists those since a time that are not expired, and prunes expired ones', async () => {
      const repo = store().oidc;
      const T = 1_900_000_000_000 + Math.floor(Math.random() * 1e9);
      const [early, late, brief] = [unique(), unique(), unique()];
      await repo.revokeSession({ sessionId: early, revokedAt: T, expiresAt: T + 3_600_000 });
      await repo.revokeSession({ sessionId: early, revokedAt: T + 5, expiresAt: T + 3_600_000 });
      await repo.revokeSession({ sessionId: late, revokedAt: T + 1_000, expiresAt: T + 3_600_000 });
      await repo.revokeSession({ sessionId: brief, revokedAt: T + 1_000, expiresAt: T + 2_000 });
      const ids = (rows: Array<{ sessionId: string }>) => rows.map((r) => r.sessionId).filter((id) => [early, late, brief].includes(id));
      assert.deepEqual(ids(await repo.revokedSince(T, T)).sort(), [early, late, brief].sort());
      const again = (await repo.revokedSince(T, T)).find((r) => r.sessionId === early);
      assert.equal(again?.revokedAt, T, 'a second sign-out of one session keeps the first row');
      assert.deepEqual(ids(await repo.revokedSince(T + 1, T)).sort(), [late, brief].sort());
      assert.deepEqual(ids(await repo.revokedSince(T, T + 2_000)).sort(), [early, late].sort(), 'expired sessions are not listed');
      assert.ok((await repo.deleteExpiredRevocations(T + 2_000)) >= 1);
      assert.deepEqual(ids(await repo.revokedSince(0, 0)).sort(), [early, late].sort());
    });

    it('stores a sealed key once per purpose, the first insert winning; reads and deletes a clear one', async () => {
      const repo = store().oidc;
      const purpose = `sealed-${unique()}`;
      const first = await repo.sealedKey(purpose, { keyId: 'k1', sealedSecret: 'v1.first' });
      assert.deepEqual([first.purpose, first.keyId, first.sealedSecret], [purpose, 'k1', 'v1.first']);
      const second = await repo.sealedKey(purpose, { keyId: 'k2', sealedSecret: 'v1.second' });
      assert.deepEqual([second.keyId, second.sealedSecret, second.createdAt], ['k1', 'v1.first', first.createdAt]);
      const clearPurpose = `clear-${unique()}`;
      assert.equal(await repo.clearKey(clearPurpose), undefined);
      await repo.key(clearPurpose, { keyId: 'c1', secret: 'plain' });
      assert.deepEqual([(await repo.clearKey(clearPurpose))?.keyId, (await repo.clearKey(clearPurpose))?.secret], ['c1', 'plain']);
      await repo.forgetClearKey(clearPurpose);
      assert.equal(await repo.clearKey(clearPurpose), undefined);
    });

    it('stores signing keys once per kid, lists them oldest first, and deletes one', async () => {
      const repo = store().oidc;
      const before = (await repo.signingKeys()).length;
      const key = (kid: string, createdAt: number) => ({
        kid,
        sealedKey: `v1.${kid}`,
        publicJwk: `{"kid":"${kid}"}`,
        createdAt,
        activeAt: createdAt + 60_000,
      });
      const [a, b] = [unique(), unique()];
      await repo.addSigningKey(key(b, 2_000));
      await repo.addSigningKey(key(a, 1_000));
      await repo.addSigningKey({ ...key(a, 1_000), sealedKey: 'v1.other' });
      const listed = (await repo.signingKeys()).filter((k) => k.kid === a || k.kid === b);
      assert.deepEqual(listed, [key(a, 1_000), key(b, 2_000)]);
      await repo.deleteSigningKey(a);
      assert.equal((await repo.signingKeys()).length, before + 1);
      await repo.deleteSigningKey(b);
    });
  });
}
