import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { ErrorCode, Messages, SvcError } from '@svcrouter/protocol';
import { openStore, type Store } from '../store/index.js';
import { Binder } from './binder.js';
import type { EdgeSession } from './edge-session.js';
import { Router } from './router.js';

// Plan limits at the Binder, against a real SQLite store. Only the Binder's public bind()
// is used; the session is the minimum bind() touches (it never sends on it).

const LIMIT = 3;

describe('Binder plan limits', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-binder-'));
    store = await openStore({ dataDir: dir });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  function binder(overBandwidth: (accountId: string) => boolean = () => false): Binder {
    return new Binder({
      store,
      router: new Router(),
      sharedDomain: 'localhost',
      nodeId: 'node-test',
      log: pino({ level: 'silent' }),
      publicUrl: (hostname) => `https://${hostname}`,
      limitsFor: () => ({ tunnels: LIMIT, domains: 2, bandwidthBytes: 1 }),
      isOverBandwidth: overBandwidth,
    });
  }
  const sessionOf = (accountId: string) =>
    ({
      accountId,
      agentVersion: 'test',
      agentIp: '127.0.0.1',
      isClosed: false,
      bindings: new Map(),
      release: () => undefined,
    }) as unknown as EdgeSession;
  const bindRequest = (requestId: number) => ({ type: 'bind' as const, requestId, local: 'localhost:3000' });

  it(`50 concurrent binds against a limit of ${LIMIT} give exactly ${LIMIT} tunnels`, async () => {
    const account = await store.accounts.create({ email: 'limit@example.com', name: 'L', plan: 'free' });
    const b = binder();
    const session = sessionOf(account.id);
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
    assert.equal(await store.tunnels.countOnline(account.id), LIMIT);
  });

  it('refuses a bind with "Bandwidth limit reached" when the quota is used up', async () => {
    const account = await store.accounts.create({ email: 'quota@example.com', name: 'Q', plan: 'free' });
    const b = binder((id) => id === account.id);
    await assert.rejects(b.bind(sessionOf(account.id), bindRequest(1)), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, ErrorCode.BANDWIDTH_LIMIT);
      assert.equal(error.message, Messages.BANDWIDTH_LIMIT);
      return true;
    });
    assert.equal(await store.tunnels.countOnline(account.id), 0);
  });
});
