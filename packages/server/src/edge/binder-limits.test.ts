import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, Messages, SvcError } from '@svcrouter/protocol';
import type { Binder } from './binder.js';
import { fakeSession, storeSuite, testBinder } from './binder-test-support.js';

// Plan limits at the Binder, against a real SQLite store. Only the Binder's public bind()
// is used; the session is the minimum bind() touches (it never sends on it).

const LIMIT = 3;

describe('Binder plan limits', () => {
  const suite = storeSuite('svc-binder-');

  function binder(overBandwidth: (accountId: string) => boolean = () => false): Binder {
    return testBinder({
      store: suite.store,
      limitsFor: () => ({ tunnels: LIMIT, domains: 2, bandwidthBytes: 1, webhooks: 2 }),
      isOverBandwidth: overBandwidth,
    });
  }
  const bindRequest = (requestId: number) => ({ type: 'bind' as const, requestId, local: 'localhost:3000' });

  it(`50 concurrent binds against a limit of ${LIMIT} give exactly ${LIMIT} tunnels`, async () => {
    const account = await suite.store.accounts.create({ email: 'limit@example.com', name: 'L', plan: 'free' });
    const b = binder();
    const session = fakeSession(account.id);
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => b.bind(session, bindRequest(i))));
    const bound = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(bound.length, LIMIT);
    assert.equal(refused.length, 50 - LIMIT);
    for (const r of refused) {
      assert.ok(r.reason instanceof SvcError);
      assert.equal(r.reason.code, ErrorCode.TUNNEL_LIMIT);
      assert.equal(r.reason.message, Messages.TUNNEL_LIMIT);
    }
    assert.equal(await suite.store.tunnels.countOnline(account.id), LIMIT);
  });

  it('refuses a bind with "Bandwidth limit reached" when the quota is used up', async () => {
    const account = await suite.store.accounts.create({ email: 'quota@example.com', name: 'Q', plan: 'free' });
    const b = binder((id) => id === account.id);
    await assert.rejects(b.bind(fakeSession(account.id), bindRequest(1)), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, ErrorCode.BANDWIDTH_LIMIT);
      assert.equal(error.message, Messages.BANDWIDTH_LIMIT);
      return true;
    });
    assert.equal(await suite.store.tunnels.countOnline(account.id), 0);
  });
});
