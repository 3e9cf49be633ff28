import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakeSession, storeSuite, testBinder } from './binder-test-support.js';
import { newBinding } from './edge-session.js';

// The request path reads a binding's fields on every request. Bindings of every kind of tunnel
// have the same fields in the same order, so V8 gives them one hidden class and those reads stay
// monomorphic on an edge serving plain tunnels beside ones with rules, pools and routes.

describe('Binder: one shape for every binding', () => {
  const suite = storeSuite('svc-binder-shape-');

  it('plain, pooled, rule-bearing, routed and grouped bindings have the same fields in the same order', async () => {
    const account = await suite.store.accounts.create({ email: 'shape@example.com', name: 'S', plan: 'pro' });
    const binder = testBinder({
      store: suite.store,
      limitsFor: () => ({ tunnels: 10, domains: 2, bandwidthBytes: 1, webhooks: 2 }),
    });
    const session = fakeSession(account.id);
    let requestId = 0;
    const bind = (fields: Record<string, unknown>) =>
      binder.bind(session, { type: 'bind', requestId: ++requestId, local: 'localhost:3000', ...fields });
    const bindings = [
      await bind({ subdomain: 'plain' }),
      await bind({ subdomain: 'pooled', pool: true }),
      await bind({ subdomain: 'allowed', policy: { cidrAllow: ['127.0.0.0/8'] } }),
      await bind({ subdomain: 'routed', routes: [{ path: '/api', local: 'localhost:4000' }] }),
      await bind({ subdomain: 'grouped', group: 'agent-1' }),
    ];
    assert.ok(bindings[1]!.pool !== undefined && bindings[2]!.access !== undefined && bindings[3]!.routes !== undefined);
    const keys = Object.keys(newBinding({ tunnelId: 't', accountId: 'a', hostname: 'h', url: 'u', local: 'l', pinned: false, session }));
    for (const binding of bindings) assert.deepEqual(Object.keys(binding), keys, binding.hostname);
  });
});
