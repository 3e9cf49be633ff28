import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Account, Store } from './store.js';

// Dashboard sign-in part of the Store contract (password hashes, sessions, sign-in links);
// runStoreContract calls it inside its suite.

const HOUR_MS = 60 * 60 * 1000;

/** Registers the sign-in contract tests. */
export function runSignInContract(store: () => Store, newAccount: () => Promise<Account>): void {
  const hash = (): string => randomBytes(32).toString('hex');

  describe('account passwords', () => {
    it('a new account has no password hash; setPasswordHash stores and replaces it', async () => {
      const a = await newAccount();
      assert.equal(await store().accounts.passwordHash(a.id), undefined);
      assert.equal(await store().accounts.setPasswordHash(a.id, 'scrypt$first'), true);
      assert.equal(await store().accounts.passwordHash(a.id), 'scrypt$first');
      await store().accounts.setPasswordHash(a.id, 'scrypt$second');
      assert.equal(await store().accounts.passwordHash(a.id), 'scrypt$second');
      assert.deepEqual(await store().accounts.byId(a.id), a, 'the account record is unchanged');
    });

    it('setPasswordHash of an unknown account is false', async () => {
      assert.equal(await store().accounts.setPasswordHash('acc_missing', 'scrypt$x'), false);
      assert.equal(await store().accounts.passwordHash('acc_missing'), undefined);
    });
  });

  describe('dashboard sessions', () => {
    it('create then byTokenHash finds the session until it expires', async () => {
      const a = await newAccount();
      const tokenHash = hash();
      const expiresAt = Date.now() + HOUR_MS;
      const created = await store().sessions.create({ tokenHash, accountId: a.id, csrfToken: 'csrf-1', expiresAt });
      assert.equal(created.accountId, a.id);
      assert.equal(created.expiresAt, expiresAt);
      assert.deepEqual(await store().sessions.byTokenHash(tokenHash, expiresAt - 1), created);
      assert.equal(await store().sessions.byTokenHash(tokenHash, expiresAt), undefined, 'expired at its expiry time');
      assert.equal(await store().sessions.byTokenHash(hash(), 0), undefined);
    });

    it('delete removes one session', async () => {
      const a = await newAccount();
      const one = hash();
      const two = hash();
      const expiresAt = Date.now() + HOUR_MS;
      await store().sessions.create({ tokenHash: one, accountId: a.id, csrfToken: 'c', expiresAt });
      await store().sessions.create({ tokenHash: two, accountId: a.id, csrfToken: 'c', expiresAt });
      assert.equal(await store().sessions.delete(one), true);
      assert.equal(await store().sessions.delete(one), false);
      assert.equal(await store().sessions.byTokenHash(one, 0), undefined);
      assert.ok(await store().sessions.byTokenHash(two, 0));
    });

    it('deleteForAccount deletes the account sessions but the kept one, never another account', async () => {
      const a = await newAccount();
      const b = await newAccount();
      const expiresAt = Date.now() + HOUR_MS;
      const [keep, drop1, drop2, other] = [hash(), hash(), hash(), hash()];
      for (const tokenHash of [keep, drop1, drop2])
        await store().sessions.create({ tokenHash, accountId: a.id, csrfToken: 'c', expiresAt });
      await store().sessions.create({ tokenHash: other, accountId: b.id, csrfToken: 'c', expiresAt });
      assert.equal(await store().sessions.deleteForAccount(a.id, keep), 2);
      assert.ok(await store().sessions.byTokenHash(keep, 0));
      assert.ok(await store().sessions.byTokenHash(other, 0));
      assert.equal(await store().sessions.deleteForAccount(a.id), 1);
      assert.equal(await store().sessions.byTokenHash(keep, 0), undefined);
    });

    it('deleteExpired removes only sessions expired at the given time', async () => {
      const a = await newAccount();
      const old = hash();
      const fresh = hash();
      // Far in the past, so sessions other tests create stay untouched.
      await store().sessions.create({ tokenHash: old, accountId: a.id, csrfToken: 'c', expiresAt: 1000 });
      await store().sessions.create({ tokenHash: fresh, accountId: a.id, csrfToken: 'c', expiresAt: 3000 });
      assert.equal(await store().sessions.deleteExpired(2000), 1);
      assert.equal(await store().sessions.byTokenHash(old, 0), undefined);
      assert.ok(await store().sessions.byTokenHash(fresh, 0));
      await store().sessions.delete(fresh);
    });
  });

  describe('sign-in links', () => {
    it('consume returns the account once', async () => {
      const a = await newAccount();
      const tokenHash = hash();
      await store().signInLinks.create({ tokenHash, accountId: a.id, expiresAt: 10_000 });
      assert.equal(await store().signInLinks.consume(tokenHash, 5000), a.id);
      assert.equal(await store().signInLinks.consume(tokenHash, 5000), undefined, 'a used link is refused');
    });

    it('consume refuses expired and unknown links', async () => {
      const a = await newAccount();
      const tokenHash = hash();
      await store().signInLinks.create({ tokenHash, accountId: a.id, expiresAt: 10_000 });
      assert.equal(await store().signInLinks.consume(tokenHash, 10_000), undefined);
      assert.equal(await store().signInLinks.consume(hash(), 0), undefined);
    });

    it('concurrent consumes of one link: exactly one wins', async () => {
      const a = await newAccount();
      const tokenHash = hash();
      await store().signInLinks.create({ tokenHash, accountId: a.id, expiresAt: 10_000 });
      const results = await Promise.all([1, 2, 3].map(() => store().signInLinks.consume(tokenHash, 5000)));
      assert.deepEqual(
        results.filter((r) => r !== undefined),
        [a.id],
      );
    });

    it('deleteExpired removes expired links only', async () => {
      const a = await newAccount();
      const old = hash();
      const fresh = hash();
      await store().signInLinks.create({ tokenHash: old, accountId: a.id, expiresAt: 500 });
      await store().signInLinks.create({ tokenHash: fresh, accountId: a.id, expiresAt: 900 });
      assert.equal(await store().signInLinks.deleteExpired(600), 1);
      assert.equal(await store().signInLinks.consume(fresh, 700), a.id);
    });
  });
}
