import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BindMessages, ErrorCode, SvcError } from '@svcrouter/protocol';
import { endRefusedReturn } from './away-tunnels.js';
import { fakeSession, storeSuite, testBinder } from './binder-test-support.js';
import { Holds } from './hold.js';

// A tunnel whose agent is away (its name in its grace period) at the Binder, against a real
// SQLite store: it keeps its slot with its name, its own return does not count against it, and a
// return refused for the limit ends its grace and its held requests.

describe('Binder with a tunnel whose agent is away', () => {
  const suite = storeSuite('svc-binder-away-');
  const limits = (tunnels: number) => ({ tunnels, domains: 2, bandwidthBytes: 1, webhooks: 2 });
  const bindRequest = (requestId: number, hostname: string) => ({ type: 'bind' as const, requestId, local: 'localhost:3000', hostname });

  it('keeps the away tunnel its slot: another name is refused at the limit, its own return is not', async () => {
    const account = await suite.store.accounts.create({ email: 'away-slot@example.com', name: 'A', plan: 'free' });
    const binder = testBinder({ store: suite.store, limitsFor: () => limits(1), nameGraceMs: 60_000 });
    const bound = await binder.bind(fakeSession(account.id), bindRequest(1, 'kept.localhost'));
    binder.unbind(bound, 'lost');
    await binder.idle();
    assert.equal(await suite.store.tunnels.countOnline(account.id), 0, 'the row is offline while the agent is away');
    await assert.rejects(binder.bind(fakeSession(account.id), bindRequest(2, 'other.localhost')), (error: unknown) => {
      assert.ok(error instanceof SvcError);
      assert.equal(error.code, ErrorCode.TUNNEL_LIMIT);
      assert.equal(error.message, BindMessages.tunnelLimitAway(1, 60), 'the refusal says why, and for how long');
      return true;
    });
    const back = await binder.bind(fakeSession(account.id), bindRequest(3, 'kept.localhost'));
    assert.equal(back.hostname, 'kept.localhost');
    assert.deepEqual(binder.graceBindings(), []);
  });

  it('ends the grace and refuses the held requests when the return is refused for the limit', async () => {
    const account = await suite.store.accounts.create({ email: 'away-refused@example.com', name: 'R', plan: 'free' });
    let limit = 1;
    const binder = testBinder({ store: suite.store, limitsFor: () => limits(limit), nameGraceMs: 60_000 });
    const holds = new Holds({ holdMs: 60_000 });
    const bound = await binder.bind(fakeSession(account.id), bindRequest(1, 'refused.localhost'));
    binder.unbind(bound, 'lost');
    await binder.idle();
    const expired: string[] = [];
    const grace = binder.graceOf('refused.localhost')!;
    holds.hold('refused.localhost', grace.accountId, grace.until, 10, {
      deliver: () => expired.push('delivered'),
      expire: () => expired.push('expired'),
    });
    limit = 0;
    const request = bindRequest(2, 'refused.localhost');
    const error = await binder.bind(fakeSession(account.id), request).then(
      () => assert.fail('bound over a limit of none'),
      (refusal: unknown) => refusal,
    );
    const other = endRefusedReturn({ binder, holds, tcp: undefined }, 'acc_someone_else', request, error);
    assert.equal(other, undefined, "another account's refusal ends no grace");
    const lost = endRefusedReturn({ binder, holds, tcp: undefined }, account.id, request, error);
    assert.equal(lost?.hostname, 'refused.localhost');
    assert.equal(binder.graceOf('refused.localhost'), undefined, 'the name is free');
    assert.deepEqual(expired, ['expired'], 'the held request gets the offline page now');
    holds.close();
  });
});
