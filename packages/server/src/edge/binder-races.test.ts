import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, SvcError } from '@svcrouter/protocol';
import type { Store, TunnelBinding } from '../store/index.js';
import type { Binder } from './binder.js';
import { storeSuite, testBinder } from './binder-test-support.js';
import type { EdgeSession } from './edge-session.js';
import type { Binding } from './router.js';
import { Router } from './router.js';

// Orderings between binds, unbinds and sessions ending, at the Binder, against a real SQLite
// store. The store is wrapped only to run a step of the test at a chosen point of a bind.

interface FakeSession {
  accountId: string;
  agentVersion: string;
  agentIp: string;
  isClosed: boolean;
  bindings: Map<string, Binding>;
  released: Array<{ tunnelId: string; code: string }>;
  release(tunnelId: string, code: string): void;
}

function sessionOf(accountId: string): FakeSession & EdgeSession {
  const session: FakeSession = {
    accountId,
    agentVersion: 'test',
    agentIp: '127.0.0.1',
    isClosed: false,
    bindings: new Map(),
    released: [],
    release(tunnelId, code) {
      session.bindings.delete(tunnelId);
      session.released.push({ tunnelId, code });
    },
  };
  return session as FakeSession & EdgeSession;
}

describe('Binder orderings', () => {
  const suite = storeSuite('svc-binder-races-');
  /** Runs once, just after the next upsertOnline was sent to the store and before it completes. */
  let duringUpsert: ((input: TunnelBinding) => void) | undefined;

  function setup(): { binder: Binder; router: Router } {
    const store = suite.store;
    const router = new Router();
    const tunnels = Object.create(store.tunnels) as Store['tunnels'];
    tunnels.upsertOnline = (input) => {
      const step = duringUpsert;
      duringUpsert = undefined;
      const result = store.tunnels.upsertOnline(input);
      step?.(input);
      return result;
    };
    const binder = testBinder({
      store: { ...store, tunnels },
      router,
      limitsFor: () => ({ tunnels: 10, domains: 2, bandwidthBytes: 1, webhooks: 2 }),
    });
    return { binder, router };
  }
  const bind = (subdomain: string, requestId = 1) => ({ type: 'bind' as const, requestId, local: 'localhost:3000', subdomain });
  const reclaim = (hostname: string, subdomain: string) => ({
    type: 'bind' as const,
    requestId: 2,
    local: 'localhost:3000',
    hostname,
    subdomain,
  });
  const account = (email: string) => suite.store.accounts.create({ email, name: 'n', plan: 'free' });

  it('an old session ending while its reconnect rewrites the row leaves the row online', async () => {
    const { binder, router } = setup();
    const { id } = await account('reclaim@example.com');
    const oldSession = sessionOf(id);
    const old = await binder.bind(oldSession, bind('reclaimed'));
    const newSession = sessionOf(id);
    // The edge notices the old connection is gone while the new one's bind is writing the row.
    duringUpsert = () => binder.unbind(old, 'lost');
    const fresh = await binder.bind(newSession, reclaim('reclaimed.localhost', 'reclaimed'));
    await binder.idle();
    assert.equal(fresh.tunnelId, old.tunnelId);
    assert.equal(router.resolve('reclaimed.localhost'), fresh);
    assert.equal((await suite.store.tunnels.byHostname('reclaimed.localhost'))?.status, 'online');
    assert.equal(await suite.store.tunnels.countOnline(id), 1);
  });

  it('a bind whose session ends during the store write is refused and recorded offline', async () => {
    const { binder, router } = setup();
    const { id } = await account('gone@example.com');
    const session = sessionOf(id);
    duringUpsert = () => (session.isClosed = true);
    await assert.rejects(binder.bind(session, bind('gone-early')), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, ErrorCode.SESSION_CLOSED);
      return true;
    });
    await binder.idle();
    assert.equal(router.resolve('gone-early.localhost'), undefined);
    assert.equal(session.bindings.size, 0);
    assert.equal((await suite.store.tunnels.byHostname('gone-early.localhost'))?.status, 'offline');
  });

  it('a newer agent of the same account takes the name over: the older session is told, the router points at the newer', async () => {
    const { binder, router } = setup();
    const { id } = await account('takeover@example.com');
    const older = sessionOf(id);
    const first = await binder.bind(older, bind('taken'));
    const newer = sessionOf(id);
    const second = await binder.bind(newer, bind('taken'));
    assert.deepEqual(older.released, [{ tunnelId: first.tunnelId, code: ErrorCode.TUNNEL_RELEASED }]);
    assert.equal(older.bindings.size, 0);
    assert.equal(newer.bindings.get(second.tunnelId), second);
    assert.equal(router.resolve('taken.localhost'), second);
    assert.equal(await suite.store.tunnels.countOnline(id), 1);
  });

  it("another account's bind for a name just unbound waits for the offline write instead of failing", async () => {
    const { binder } = setup();
    const holder = await account('leaving@example.com');
    const taker = await account('arriving@example.com');
    const binding = await binder.bind(sessionOf(holder.id), bind('handed-over'));
    binder.unbind(binding, 'lost');
    const taken = await binder.bind(sessionOf(taker.id), bind('handed-over'));
    const row = await suite.store.tunnels.byHostname('handed-over.localhost');
    assert.deepEqual([row?.accountId, row?.status, row?.id], [taker.id, 'online', taken.tunnelId]);
  });

  it('a clean exit of a random name deletes its row; of a pinned name keeps it offline', async () => {
    const { binder } = setup();
    const { id } = await account('exits@example.com');
    const random = await binder.bind(sessionOf(id), { type: 'bind', requestId: 1, local: 'localhost:3000' });
    const pinned = await binder.bind(sessionOf(id), bind('kept'));
    binder.unbind(random, 'goodbye');
    binder.unbind(pinned, 'goodbye');
    await binder.idle();
    assert.equal(await suite.store.tunnels.byHostname(random.hostname), undefined);
    assert.equal((await suite.store.tunnels.byHostname('kept.localhost'))?.status, 'offline');
  });
});
