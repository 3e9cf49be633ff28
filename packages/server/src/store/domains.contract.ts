import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Account, Store } from './store.js';
import { StoreConflictError } from './store-conflict-error.js';

// The domains, certificates and acme_account part of the Store contract. It is
// called from inside runStoreContract, which owns the store and the clock.

const DAY_MS = 24 * 60 * 60 * 1000;

/** Registers the domain/certificate/ACME contract tests; `store()` is read inside each test. */
export function runDomainContract(store: () => Store, newAccount: () => Promise<Account>): void {
  const unique = (): string => randomBytes(5).toString('hex');
  const host = (): string => `d-${unique()}.example.com`;
  const addDomain = (accountId: string, h = host()) => store().domains.create({ accountId, host: h, txtValue: `svc-verify-${unique()}` });

  describe('domains', () => {
    it('create returns a pending domain with no certificate yet', async () => {
      const a = await newAccount();
      const h = host();
      const d = await store().domains.create({ accountId: a.id, host: h.toUpperCase(), txtValue: 'svc-verify-x' });
      assert.match(d.id, /^dom_[a-z2-7]{16}$/);
      assert.equal(d.host, h);
      assert.equal(d.state, 'pending');
      assert.equal(d.txtValue, 'svc-verify-x');
      assert.equal(d.verifiedAt, undefined);
      assert.equal(d.certState, 'none');
      assert.equal(d.certError, undefined);
      assert.equal(d.certExpiresAt, undefined);
      assert.deepEqual(await store().domains.byId(a.id, d.id), d);
    });

    it('the same account cannot add one host twice; another account can', async () => {
      const a = await newAccount();
      const b = await newAccount();
      const d = await addDomain(a.id);
      await assert.rejects(addDomain(a.id, d.host), StoreConflictError);
      assert.equal((await addDomain(b.id, d.host)).state, 'pending');
      assert.equal((await store().domains.byHost(d.host)).length, 2);
    });

    it('byId and delete are account-scoped; delete returns the row once', async () => {
      const a = await newAccount();
      const b = await newAccount();
      const d = await addDomain(a.id);
      assert.equal(await store().domains.byId(b.id, d.id), undefined);
      assert.equal(await store().domains.delete(b.id, d.id), undefined);
      assert.deepEqual(await store().domains.delete(a.id, d.id), d);
      assert.equal(await store().domains.delete(a.id, d.id), undefined);
      assert.equal(await store().domains.byId(a.id, d.id), undefined);
    });

    it('listForAccount lists that account only, newest first; countForAccount counts pending and verified', async () => {
      const a = await newAccount();
      const b = await newAccount();
      const d1 = await addDomain(a.id);
      const d2 = await addDomain(a.id);
      await addDomain(b.id);
      await store().domains.markVerified(d1.id);
      assert.deepEqual(
        (await store().domains.listForAccount(a.id)).map((d) => d.id),
        [d2.id, d1.id],
      );
      assert.equal(await store().domains.countForAccount(a.id), 2);
    });

    it('markVerified sets verifiedAt once and is idempotent', async () => {
      const a = await newAccount();
      const d = await addDomain(a.id);
      const v = await store().domains.markVerified(d.id);
      assert.equal(v?.state, 'verified');
      assert.equal(typeof v?.verifiedAt, 'number');
      assert.deepEqual(await store().domains.markVerified(d.id), v);
      assert.equal(await store().domains.markVerified('dom_missing'), undefined);
    });

    it('a host verified on one account makes markVerified on another throw StoreConflictError', async () => {
      const a = await newAccount();
      const b = await newAccount();
      const da = await addDomain(a.id);
      const db = await addDomain(b.id, da.host);
      await store().domains.markVerified(da.id);
      await assert.rejects(store().domains.markVerified(db.id), StoreConflictError);
      assert.equal((await store().domains.byId(b.id, db.id))?.state, 'pending');
      const [first, second] = await store().domains.byHost(da.host);
      assert.equal(first?.id, da.id);
      assert.equal(second?.id, db.id);
    });

    it('after the verified owner deletes the host, another account can verify it', async () => {
      const a = await newAccount();
      const b = await newAccount();
      const da = await addDomain(a.id);
      const db = await addDomain(b.id, da.host);
      await store().domains.markVerified(da.id);
      await store().domains.delete(a.id, da.id);
      assert.equal((await store().domains.markVerified(db.id))?.state, 'verified');
    });

    it('concurrent markVerified of one host by five accounts: exactly one wins', async () => {
      const h = host();
      const rows = [];
      for (let i = 0; i < 5; i++) rows.push(await addDomain((await newAccount()).id, h));
      const results = await Promise.allSettled(rows.map((d) => store().domains.markVerified(d.id)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof StoreConflictError);
      assert.equal((await store().domains.byHost(h)).filter((d) => d.state === 'verified').length, 1);
    });

    it('verifiedHostCovering finds the host itself or its nearest verified parent, never a pending one', async () => {
      const a = await newAccount();
      const b = await newAccount();
      const parent = await addDomain(a.id);
      await store().domains.markVerified(parent.id);
      const child = await addDomain(b.id, `app.${parent.host}`);
      await store().domains.markVerified(child.id);
      const pending = await addDomain(a.id);
      const covering = (h: string) => store().domains.verifiedHostCovering(h);
      assert.equal((await covering(parent.host))?.id, parent.id);
      assert.equal((await covering(`x.y.${parent.host.toUpperCase()}`))?.id, parent.id);
      assert.equal((await covering(`app.${parent.host}`))?.id, child.id);
      assert.equal((await covering(`deep.app.${parent.host}`))?.id, child.id);
      assert.equal(await covering(pending.host), undefined);
      assert.equal(await covering(`x${parent.host}`), undefined);
      assert.equal(await covering('com'), undefined);
    });

    it('setCertState updates the verified row only; undefined expiresAt keeps the previous expiry', async () => {
      const a = await newAccount();
      const b = await newAccount();
      const d = await addDomain(a.id);
      const other = await addDomain(b.id, d.host);
      await store().domains.markVerified(d.id);
      await store().domains.setCertState(d.host, 'issued', undefined, 1_800_000_000_000);
      await store().domains.setCertState(d.host, 'pending');
      let read = await store().domains.byId(a.id, d.id);
      assert.equal(read?.certState, 'pending');
      assert.equal(read?.certExpiresAt, 1_800_000_000_000);
      await store().domains.setCertState(d.host, 'failed', 'connection refused');
      read = await store().domains.byId(a.id, d.id);
      assert.equal(read?.certState, 'failed');
      assert.equal(read?.certError, 'connection refused');
      assert.equal((await store().domains.byId(b.id, other.id))?.certState, 'none');
    });
  });

  describe('certificates', () => {
    const cert = (h: string, expiresAt: number) => ({ host: h, certPem: `cert ${h}`, keyPem: `key ${h}`, expiresAt, issuedAt: 1 });

    it('put then get round-trips; put again replaces', async () => {
      const h = host();
      assert.equal(await store().certificates.get(h), undefined);
      await store().certificates.put(cert(h, 1_800_000_000_000));
      assert.deepEqual(await store().certificates.get(h.toUpperCase()), cert(h, 1_800_000_000_000));
      await store().certificates.put({ ...cert(h, 1_900_000_000_000), certPem: 'renewed' });
      assert.equal((await store().certificates.get(h))?.certPem, 'renewed');
    });

    it('listExpiringBefore returns only earlier expiries, soonest first', async () => {
      // Far in the past, so rows other tests put never fall in the window.
      const base = 1_000_000_000_000 + Math.floor(Math.random() * 1000) * DAY_MS;
      const [late, soon, later] = [host(), host(), host()];
      await store().certificates.put(cert(late, base + 2 * DAY_MS));
      await store().certificates.put(cert(soon, base + DAY_MS));
      await store().certificates.put(cert(later, base + 10 * DAY_MS));
      const due = await store().certificates.listExpiringBefore(base + 3 * DAY_MS);
      const mine = due.map((c) => c.host).filter((h) => [late, soon, later].includes(h));
      assert.deepEqual(mine, [soon, late]);
      for (const h of [late, soon, later]) await store().certificates.delete(h);
    });

    it('delete removes the certificate and reports whether there was one', async () => {
      const h = host();
      await store().certificates.put(cert(h, 1_800_000_000_000));
      assert.equal(await store().certificates.delete(h), true);
      assert.equal(await store().certificates.delete(h), false);
      assert.equal(await store().certificates.get(h), undefined);
    });
  });

  describe('acme account', () => {
    it('putIfAbsent keeps the first key; concurrent callers all get it', async () => {
      const id = `https://ca-${unique()}.test/dir`;
      assert.equal(await store().acme.get(id), undefined);
      const results = await Promise.all(['k1', 'k2', 'k3'].map((keyPem) => store().acme.putIfAbsent({ id, keyPem })));
      const keys = new Set(results.map((r) => r.keyPem));
      assert.equal(keys.size, 1);
      assert.equal((await store().acme.putIfAbsent({ id, keyPem: 'late' })).keyPem, results[0]?.keyPem);
      assert.equal(results[0]?.url, undefined);
    });

    it('setUrl records the account URL', async () => {
      const id = `https://ca-${unique()}.test/dir`;
      await store().acme.putIfAbsent({ id, keyPem: 'k' });
      await store().acme.setUrl(id, 'https://ca.test/acct/1');
      assert.deepEqual(await store().acme.get(id), { id, keyPem: 'k', url: 'https://ca.test/acct/1' });
    });
  });
}
