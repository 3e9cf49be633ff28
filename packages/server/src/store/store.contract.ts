import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Store, TunnelBinding } from './store.js';
import { PolicyConflictError, StoreConflictError } from './store-conflict-error.js';
import { runAcmeSharedContract } from './acme-shared.contract.js';
import { runWebhooksContract } from './webhooks.contract.js';
import { runClusterContract } from './cluster.contract.js';
import { runDomainContract } from './domains.contract.js';
import { runRequestsContract } from './requests.contract.js';
import { runSignInContract } from './sign-in.contract.js';
import { runOidcSessionsContract } from './oidc-sessions.contract.js';
import { runRateLimitContract } from './rate-limits.contract.js';
import { runTcpAddressContract } from './tcp-addresses.contract.js';
import { runUsageContract } from './usage.contract.js';

// One behaviour suite for every Store engine (SQLite, PostgreSQL). The suite
// shares one store per run and keeps tests independent by giving every test
// its own accounts, hostnames and node ids.

const START_MS = 1_700_000_000_000;
const TICK_MS = 1000;

/** Runs the Store contract against stores produced by `open`, which must pass `now` through to openStore. */
export function runStoreContract(name: string, open: (now: () => number) => Promise<Store>): void {
  describe(`Store contract: ${name}`, () => {
    // Every read of the clock advances it, so creation order is strict and
    // "newest first" is checkable without sleeping.
    let clock = START_MS;
    const now = (): number => (clock += TICK_MS);
    let store!: Store;
    const unique = (): string => randomBytes(5).toString('hex');
    const newAccount = (plan: 'free' | 'pro' = 'free') => store.accounts.create({ email: `u-${unique()}@example.com`, name: 'User', plan });
    const newKey = (accountId: string, description = 'laptop') =>
      store.keys.insert({ accountId, description, prefix: 'svc_abcdefgh', tokenHash: randomBytes(32).toString('hex') });
    const binding = (accountId: string, over: Partial<TunnelBinding> = {}): TunnelBinding => ({
      accountId,
      hostname: `t-${unique()}.localhost`,
      pinned: false,
      localAddr: 'http://localhost:3000',
      agentVersion: '0.1.0',
      agentIp: '127.0.0.1',
      nodeId: `node-${unique()}`,
      ...over,
    });

    before(async () => {
      store = await open(now);
    });
    after(async () => {
      await store.close();
    });

    describe('accounts', () => {
      it('create returns the account with a prefixed id and the clock time', async () => {
        const startedAt = clock;
        const a = await store.accounts.create({ email: `c-${unique()}@example.com`, name: 'Ann', plan: 'pro' });
        assert.match(a.id, /^acc_[a-z2-7]{16}$/);
        assert.equal(a.name, 'Ann');
        assert.equal(a.plan, 'pro');
        assert.ok(a.createdAt > startedAt);
        assert.deepEqual(await store.accounts.byId(a.id), a);
      });

      it('create with a taken email throws StoreConflictError, whatever the case', async () => {
        const a = await newAccount();
        await assert.rejects(store.accounts.create({ email: a.email.toUpperCase(), name: 'Dup', plan: 'free' }), StoreConflictError);
      });

      it('byEmail finds the account case-insensitively', async () => {
        const a = await newAccount();
        assert.deepEqual(await store.accounts.byEmail(a.email.toUpperCase()), a);
      });

      it('byId and byEmail return undefined when not found', async () => {
        assert.equal(await store.accounts.byId('acc_missing'), undefined);
        assert.equal(await store.accounts.byEmail('nobody@example.com'), undefined);
      });

      it('setPlan changes the plan and returns the updated account', async () => {
        const a = await newAccount('free');
        const updated = await store.accounts.setPlan(a.id, 'pro');
        assert.equal(updated?.plan, 'pro');
        assert.equal((await store.accounts.byId(a.id))?.plan, 'pro');
      });

      it('setPlan on a missing account returns undefined', async () => {
        assert.equal(await store.accounts.setPlan('acc_missing', 'pro'), undefined);
      });

      it('plansOf reads the plans of many accounts at once, leaving unknown ids out', async () => {
        const free = await newAccount('free');
        const pro = await newAccount('pro');
        // More ids than one query takes: the unknown ones fill the first chunks.
        const unknown = Array.from({ length: 1200 }, (_, i) => `acc_missing_${i}`);
        const plans = await store.accounts.plansOf([...unknown, free.id, pro.id]);
        assert.deepEqual(
          [...plans].sort(),
          [
            [free.id, 'free'],
            [pro.id, 'pro'],
          ].sort(),
        );
        assert.equal((await store.accounts.plansOf([])).size, 0);
      });

      it('count counts accounts', async () => {
        const initial = await store.accounts.count();
        await newAccount();
        await newAccount();
        assert.equal(await store.accounts.count(), initial + 2);
      });
    });

    describe('keys', () => {
      it('insert returns the record, unused and unrevoked', async () => {
        const a = await newAccount();
        const k = await newKey(a.id, 'ci');
        assert.match(k.id, /^key_[a-z2-7]{16}$/);
        assert.equal(k.accountId, a.id);
        assert.equal(k.description, 'ci');
        assert.equal(k.prefix, 'svc_abcdefgh');
        assert.equal(k.lastUsedAt, undefined);
        assert.equal(k.revokedAt, undefined);
      });

      it('byTokenHash finds the key, and undefined for an unknown hash', async () => {
        const a = await newAccount();
        const k = await newKey(a.id);
        assert.deepEqual(await store.keys.byTokenHash(k.tokenHash), k);
        assert.equal(await store.keys.byTokenHash('0'.repeat(64)), undefined);
      });

      it('byTokenHash still returns a revoked key, with revokedAt set', async () => {
        const a = await newAccount();
        const k = await newKey(a.id);
        assert.equal(await store.keys.revoke(a.id, k.id), true);
        const found = await store.keys.byTokenHash(k.tokenHash);
        assert.equal(typeof found?.revokedAt, 'number');
      });

      it('listForAccount lists non-revoked keys of that account only, newest first', async () => {
        const a = await newAccount();
        const other = await newAccount();
        const k1 = await newKey(a.id, 'one');
        const k2 = await newKey(a.id, 'two');
        const k3 = await newKey(a.id, 'three');
        await newKey(other.id);
        await store.keys.revoke(a.id, k2.id);
        const list = await store.keys.listForAccount(a.id);
        assert.deepEqual(
          list.map((k) => k.id),
          [k3.id, k1.id],
        );
      });

      it('revoke is false for another account, a missing key, or a second revocation', async () => {
        const a = await newAccount();
        const b = await newAccount();
        const k = await newKey(a.id);
        assert.equal(await store.keys.revoke(b.id, k.id), false);
        assert.equal((await store.keys.byTokenHash(k.tokenHash))?.revokedAt, undefined);
        assert.equal(await store.keys.revoke(a.id, 'key_missing'), false);
        assert.equal(await store.keys.revoke(a.id, k.id), true);
        const firstRevokedAt = (await store.keys.byTokenHash(k.tokenHash))?.revokedAt;
        assert.equal(await store.keys.revoke(a.id, k.id), false);
        assert.equal((await store.keys.byTokenHash(k.tokenHash))?.revokedAt, firstRevokedAt);
      });

      it('countActive counts non-revoked keys of the account', async () => {
        const a = await newAccount();
        const b = await newAccount();
        const k1 = await newKey(a.id);
        await newKey(a.id);
        await newKey(b.id);
        await store.keys.revoke(a.id, k1.id);
        assert.equal(await store.keys.countActive(a.id), 1);
        assert.equal(await store.keys.countActive(b.id), 1);
      });

      it('touch sets lastUsedAt and never moves it backwards', async () => {
        const a = await newAccount();
        const k = await newKey(a.id);
        await store.keys.touch(k.id, START_MS + 5_000_000);
        assert.equal((await store.keys.byTokenHash(k.tokenHash))?.lastUsedAt, START_MS + 5_000_000);
        await store.keys.touch(k.id, START_MS + 4_000_000);
        assert.equal((await store.keys.byTokenHash(k.tokenHash))?.lastUsedAt, START_MS + 5_000_000);
      });
    });

    describe('tunnels', () => {
      it('upsertOnline creates an online tunnel with all fields', async () => {
        const a = await newAccount();
        const input = binding(a.id, { pinned: true, agentIp: '203.0.113.7' });
        const t = await store.tunnels.upsertOnline(input);
        assert.match(t.id, /^tun_[a-z2-7]{16}$/);
        assert.equal(t.status, 'online');
        assert.equal(t.pinned, true);
        assert.equal(t.hostname, input.hostname);
        assert.equal(t.localAddr, input.localAddr);
        assert.equal(t.agentVersion, input.agentVersion);
        assert.equal(t.agentIp, '203.0.113.7');
        assert.equal(t.nodeId, input.nodeId);
        assert.equal(t.createdAt, t.updatedAt);
        assert.deepEqual(await store.tunnels.byId(a.id, t.id), t);
      });

      it('upsertOnline for the same account reuses the id and updates the fields', async () => {
        const a = await newAccount();
        const first = await store.tunnels.upsertOnline(binding(a.id));
        await store.tunnels.setOffline(first.id);
        const again = await store.tunnels.upsertOnline(
          binding(a.id, { hostname: first.hostname, localAddr: 'http://localhost:4000', pinned: true, nodeId: 'n2' }),
        );
        assert.equal(again.id, first.id);
        assert.equal(again.status, 'online');
        assert.equal(again.localAddr, 'http://localhost:4000');
        assert.equal(again.pinned, true);
        assert.equal(again.nodeId, 'n2');
        assert.equal(again.createdAt, first.createdAt);
        assert.ok(again.updatedAt > first.updatedAt);
      });

      it("upsertOnline takes over another account's offline hostname with a fresh row", async () => {
        const a = await newAccount();
        const b = await newAccount();
        const old = await store.tunnels.upsertOnline(binding(a.id));
        await store.tunnels.setOffline(old.id);
        const taken = await store.tunnels.upsertOnline(binding(b.id, { hostname: old.hostname }));
        assert.notEqual(taken.id, old.id);
        assert.equal(taken.accountId, b.id);
        assert.equal(taken.status, 'online');
        assert.equal(await store.tunnels.byId(a.id, old.id), undefined);
      });

      it('upsertOnline throws StoreConflictError when another account holds the hostname online', async () => {
        const a = await newAccount();
        const b = await newAccount();
        const held = await store.tunnels.upsertOnline(binding(a.id));
        await assert.rejects(store.tunnels.upsertOnline(binding(b.id, { hostname: held.hostname })), StoreConflictError);
        assert.deepEqual(await store.tunnels.byHostname(held.hostname), held);
      });

      it('a bind without rules never replaces an online tunnel with rules; with rules, or once offline, it may', async () => {
        const a = await newAccount();
        const policy = JSON.stringify({ cidrAllow: ['10.0.0.0/8'] });
        const held = await store.tunnels.upsertOnline(binding(a.id, { policy }));
        assert.equal(held.policy, policy);
        await assert.rejects(store.tunnels.upsertOnline(binding(a.id, { hostname: held.hostname })), PolicyConflictError);
        assert.equal((await store.tunnels.byHostname(held.hostname))?.policy, policy);
        const other = JSON.stringify({ cidrDeny: ['::1'] });
        assert.equal((await store.tunnels.upsertOnline(binding(a.id, { hostname: held.hostname, policy: other }))).policy, other);
        await store.tunnels.setOffline(held.id);
        const bare = await store.tunnels.upsertOnline(binding(a.id, { hostname: held.hostname }));
        assert.equal(bare.id, held.id);
        assert.equal(bare.policy, undefined);
      });

      it("keeps the routes of a tunnel's last bind, on every path that writes the row", async () => {
        const a = await newAccount();
        const routes = JSON.stringify([{ path: '/api', local: 'localhost:4000' }]);
        const held = await store.tunnels.upsertOnline(binding(a.id, { routes }));
        assert.equal((await store.tunnels.byHostname(held.hostname))?.routes, routes);
        const bare = await store.tunnels.claimOnline(binding(a.id, { hostname: held.hostname }), 10);
        assert.equal(bare?.routes, undefined);
        const member = await store.tunnels.upsertOnline(binding(a.id, { pool: true, routes }));
        assert.equal((await store.tunnels.listForAccount(a.id)).find((t) => t.id === member.id)?.routes, routes);
      });

      it('hostnames are case-insensitive', async () => {
        const a = await newAccount();
        const t = await store.tunnels.upsertOnline(binding(a.id, { hostname: `MiXeD-${unique()}.LocalHost` }));
        assert.equal(t.hostname, t.hostname.toLowerCase());
        assert.equal((await store.tunnels.byHostname(t.hostname.toUpperCase()))?.id, t.id);
      });

      it('setOffline marks the tunnel offline', async () => {
        const a = await newAccount();
        const t = await store.tunnels.upsertOnline(binding(a.id));
        await store.tunnels.setOffline(t.id);
        const found = await store.tunnels.byId(a.id, t.id);
        assert.equal(found?.status, 'offline');
        assert.ok((found?.updatedAt ?? 0) > t.updatedAt);
      });

      it('byId is account-scoped', async () => {
        const a = await newAccount();
        const b = await newAccount();
        const t = await store.tunnels.upsertOnline(binding(a.id));
        assert.equal(await store.tunnels.byId(b.id, t.id), undefined);
        assert.equal(await store.tunnels.byId(a.id, 'tun_missing'), undefined);
      });

      it('byHostname returns undefined for an unknown hostname', async () => {
        assert.equal(await store.tunnels.byHostname(`nope-${unique()}.localhost`), undefined);
      });

      it("listForAccount lists the account's tunnels only, newest first, offline included", async () => {
        const a = await newAccount();
        const b = await newAccount();
        const t1 = await store.tunnels.upsertOnline(binding(a.id));
        const t2 = await store.tunnels.upsertOnline(binding(a.id));
        await store.tunnels.upsertOnline(binding(b.id));
        await store.tunnels.setOffline(t1.id);
        const list = await store.tunnels.listForAccount(a.id);
        assert.deepEqual(
          list.map((t) => t.id),
          [t2.id, t1.id],
        );
      });

      it("delete removes and returns the account's own tunnel, freeing the hostname", async () => {
        const a = await newAccount();
        const t = await store.tunnels.upsertOnline(binding(a.id));
        const deleted = await store.tunnels.delete(a.id, t.id);
        assert.equal(deleted?.id, t.id);
        assert.equal(await store.tunnels.byHostname(t.hostname), undefined);
        assert.equal(await store.tunnels.delete(a.id, t.id), undefined);
      });

      it("delete of another account's tunnel returns undefined and keeps it", async () => {
        const a = await newAccount();
        const b = await newAccount();
        const t = await store.tunnels.upsertOnline(binding(a.id));
        assert.equal(await store.tunnels.delete(b.id, t.id), undefined);
        assert.equal((await store.tunnels.byId(a.id, t.id))?.id, t.id);
      });

      it("countOnline counts only the account's online tunnels", async () => {
        const a = await newAccount();
        const b = await newAccount();
        const t1 = await store.tunnels.upsertOnline(binding(a.id));
        await store.tunnels.upsertOnline(binding(a.id));
        await store.tunnels.upsertOnline(binding(b.id));
        await store.tunnels.setOffline(t1.id);
        assert.equal(await store.tunnels.countOnline(a.id), 1);
        assert.equal(await store.tunnels.countOnline(b.id), 1);
      });

      it('countOnlineOf counts the online tunnels of many accounts at once', async () => {
        const a = await newAccount();
        const b = await newAccount();
        const idle = await newAccount();
        await store.tunnels.upsertOnline(binding(a.id));
        await store.tunnels.upsertOnline(binding(a.id));
        const gone = await store.tunnels.upsertOnline(binding(a.id));
        await store.tunnels.setOffline(gone.id);
        await store.tunnels.upsertOnline(binding(b.id));
        const filler = Array.from({ length: 1200 }, (_, i) => `acc_missing_${i}`);
        const counts = await store.tunnels.countOnlineOf([...filler, a.id, b.id, idle.id]);
        assert.deepEqual(
          [...counts].sort(),
          [
            [a.id, 2],
            [b.id, 1],
          ].sort(),
        );
      });

      it("markAllOfflineForNode takes that node's tunnels offline and no others", async () => {
        const a = await newAccount();
        const node = `node-${unique()}`;
        const mine1 = await store.tunnels.upsertOnline(binding(a.id, { nodeId: node }));
        const mine2 = await store.tunnels.upsertOnline(binding(a.id, { nodeId: node }));
        const elsewhere = await store.tunnels.upsertOnline(binding(a.id));
        assert.equal(await store.tunnels.markAllOfflineForNode(node), 2);
        assert.equal((await store.tunnels.byId(a.id, mine1.id))?.status, 'offline');
        assert.equal((await store.tunnels.byId(a.id, mine2.id))?.status, 'offline');
        assert.equal((await store.tunnels.byId(a.id, elsewhere.id))?.status, 'online');
        assert.equal(await store.tunnels.markAllOfflineForNode(node), 0);
      });

      it('markAllOfflineForNode with a time keeps the tunnels another node still routes online', async () => {
        const a = await newAccount();
        const node = `node-${unique()}`;
        const held = await store.tunnels.upsertOnline(binding(a.id, { nodeId: node }));
        const gone = await store.tunnels.upsertOnline(binding(a.id, { nodeId: node }));
        const route = { nodeId: `node-${unique()}`, tunnelId: held.id, accountId: a.id, localAddr: '', group: 'g', claimedAt: 1 };
        await store.cluster.upsertRoute({ ...route, hostname: held.hostname, expiresAt: 5_000 });
        // A route of the node itself, or an expired one, keeps nothing.
        await store.cluster.upsertRoute({ ...route, nodeId: node, hostname: gone.hostname, expiresAt: 5_000 });
        assert.equal(await store.tunnels.markAllOfflineForNode(node, 4_000), 1);
        assert.equal((await store.tunnels.byId(a.id, held.id))?.status, 'online');
        assert.equal((await store.tunnels.byId(a.id, gone.id))?.status, 'offline');
        assert.equal(await store.tunnels.markAllOfflineForNode(node, 5_000), 1);
        assert.equal((await store.tunnels.byId(a.id, held.id))?.status, 'offline');
      });

      it('claimOnline counts the other online hostnames against the limit, never the one it binds', async () => {
        const a = await newAccount();
        const first = await store.tunnels.claimOnline(binding(a.id), 2);
        assert.ok(first);
        assert.ok(await store.tunnels.claimOnline(binding(a.id), 2));
        assert.equal(await store.tunnels.claimOnline(binding(a.id), 2), undefined);
        // The same hostname again (a second node, a reconnect) reuses its row: still two.
        const again = await store.tunnels.claimOnline(binding(a.id, { hostname: first.hostname }), 2);
        assert.equal(again?.id, first.id);
        assert.equal(await store.tunnels.countOnline(a.id), 2);
      });

      it('concurrent claimOnline of one account at its limit: exactly the limit succeed', async () => {
        const a = await newAccount();
        const results = await Promise.all(Array.from({ length: 12 }, () => store.tunnels.claimOnline(binding(a.id), 5)));
        assert.equal(results.filter((tunnel) => tunnel !== undefined).length, 5);
        assert.equal(await store.tunnels.countOnline(a.id), 5);
      });

      it('concurrent upsertOnline of one hostname by two accounts: exactly one wins', async () => {
        const a = await newAccount();
        const b = await newAccount();
        const hostname = `race-${unique()}.localhost`;
        const results = await Promise.allSettled([
          store.tunnels.upsertOnline(binding(a.id, { hostname })),
          store.tunnels.upsertOnline(binding(b.id, { hostname })),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r) => r.status === 'rejected');
        assert.equal(won.length, 1);
        assert.equal(lost.length, 1);
        assert.ok(lost[0]?.status === 'rejected' && lost[0].reason instanceof StoreConflictError);
      });
    });

    runDomainContract(
      () => store,
      () => newAccount(),
    );
    runRequestsContract(
      () => store,
      () => newAccount(),
    );
    runUsageContract(
      () => store,
      () => newAccount(),
    );
    runSignInContract(
      () => store,
      () => newAccount(),
    );
    runClusterContract(() => store);
    runAcmeSharedContract(() => store);
    runWebhooksContract(() => store);
    runOidcSessionsContract(() => store);
    runTcpAddressContract(
      () => store,
      () => newAccount(),
    );
    runRateLimitContract(() => store);
  });
}
