import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BindMessages, ErrorCode, Messages, SvcError } from '@svcrouter/protocol';
import type { Binder } from './binder.js';
import { fakeSession, storeSuite, testBinder } from './binder-test-support.js';

// One agent holding its name through two nodes (a bind's `group`), at the Binder: two binders
// on one real store stand for two nodes of a cluster (`sharedStore`, the limit under the
// store's lock per account).

const LIMIT = 3;

describe('Binder: one agent on two nodes', () => {
  const suite = storeSuite('svc-binder-group-');

  function node(nodeId: string, heldElsewhere: () => boolean = () => false): Binder {
    return testBinder({
      store: suite.store,
      nodeId,
      limitsFor: () => ({ tunnels: LIMIT, domains: 2, bandwidthBytes: 1, webhooks: 2 }),
      sharedStore: true,
      heldElsewhere: () => Promise.resolve(heldElsewhere()),
    });
  }
  const released: string[] = [];
  const sessionOf = (accountId: string) => fakeSession(accountId, (tunnelId) => void released.push(tunnelId));
  let requestId = 0;
  const bind = (subdomain: string | undefined, group?: string, hostname?: string) => ({
    type: 'bind' as const,
    requestId: ++requestId,
    local: 'localhost:3000',
    ...(subdomain !== undefined ? { subdomain } : {}),
    ...(group !== undefined ? { group } : {}),
    ...(hostname !== undefined ? { hostname } : {}),
  });

  it('the same name on a second node counts once against the limit, with the same tunnel id', async () => {
    const account = await suite.store.accounts.create({ email: 'two-nodes@example.com', name: 'T', plan: 'free' });
    const [a, b] = [node('node-a'), node('node-b')];
    const first = await a.bind(sessionOf(account.id), bind(undefined, 'agent-1'));
    for (let i = 1; i < LIMIT; i++) await a.bind(sessionOf(account.id), bind(`other-${i}`));
    // At the limit: the random name bound on A is bound again on B under exactly that hostname.
    const second = await b.bind(sessionOf(account.id), bind(undefined, 'agent-1', first.hostname));
    assert.equal(second.hostname, first.hostname);
    assert.equal(second.tunnelId, first.tunnelId);
    assert.equal(await suite.store.tunnels.countOnline(account.id), LIMIT);
    await assert.rejects(b.bind(sessionOf(account.id), bind('one-more')), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, ErrorCode.TUNNEL_LIMIT);
      assert.equal(error.message, Messages.TUNNEL_LIMIT);
      return true;
    });
  });

  it("a second connection of one agent on the same node is refused; another agent's bind takes the name over", async () => {
    const account = await suite.store.accounts.create({ email: 'same-node@example.com', name: 'S', plan: 'free' });
    const a = node('node-a');
    const first = await a.bind(sessionOf(account.id), bind('twice', 'agent-2'));
    await assert.rejects(a.bind(sessionOf(account.id), bind('twice', 'agent-2')), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, ErrorCode.NAME_TAKEN);
      assert.equal(error.message, BindMessages.sameNode('twice.localhost'));
      return true;
    });
    assert.ok(!released.includes(first.tunnelId));
    await a.bind(sessionOf(account.id), bind('twice', 'agent-3'));
    assert.ok(released.includes(first.tunnelId));
  });

  it('a lost session leaves the tunnel online while another node still holds it, offline once none does', async () => {
    const account = await suite.store.accounts.create({ email: 'lost@example.com', name: 'L', plan: 'free' });
    let elsewhere = true;
    const a = node('node-a', () => elsewhere);
    const status = async (id: string) => (await suite.store.tunnels.byId(account.id, id))?.status;
    const held = await a.bind(sessionOf(account.id), bind('kept', 'agent-4'));
    a.unbind(held, 'lost');
    await a.idle();
    assert.equal(await status(held.tunnelId), 'online');
    elsewhere = false;
    const again = await a.bind(sessionOf(account.id), bind('kept', 'agent-4'));
    a.unbind(again, 'lost');
    await a.idle();
    assert.equal(await status(again.tunnelId), 'offline');
  });
});
