import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BindMessages } from '@svcrouter/protocol';
import { openStore, type Account, type Store } from '../store/index.js';
import {
  checkDomainBinding,
  domainNotAddedMessage,
  domainOtherAccountMessage,
  domainPendingMessage,
  isAtOrUnder,
  ownsCustomHost,
} from './domain-binding.js';

// The SVC_DOMAIN check against a real SQLite store.

describe('checkDomainBinding', () => {
  let dir: string;
  let store: Store;
  let a: Account;
  let b: Account;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-binding-'));
    store = await openStore({ dataDir: dir });
    a = await store.accounts.create({ email: 'a@example.com', name: 'A', plan: 'free' });
    b = await store.accounts.create({ email: 'b@example.com', name: 'B', plan: 'pro' });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function verified(account: Account, host: string) {
    const domain = await store.domains.create({ accountId: account.id, host, txtValue: 'svc-verify-x' });
    return (await store.domains.markVerified(domain.id))!;
  }
  const check = (account: Account, domain: string, sub?: string) => checkDomainBinding(store.domains, 'localhost', account.id, domain, sub);

  it('binds a verified host and a subdomain under it, normalising SVC_DOMAIN', async () => {
    await verified(a, 'app.one.test');
    assert.deepEqual(await check(a, 'App.One.Test.'), { ok: true, hostname: 'app.one.test' });
    assert.deepEqual(await check(a, 'app.one.test', 'api'), { ok: true, hostname: 'api.app.one.test' });
    assert.deepEqual(await check(a, 'deep.app.one.test'), { ok: true, hostname: 'deep.app.one.test' });
  });

  it('refuses a host never added, saying how to add and verify it', async () => {
    const decision = await check(a, 'nothing.one.test');
    assert.deepEqual(decision, { ok: false, message: domainNotAddedMessage('nothing.one.test') });
    assert.match(domainNotAddedMessage('x.test'), /POST \/v1\/domains \{"host":"x\.test"\}.*verify/);
  });

  it('refuses a pending domain, naming its state, record and verify call', async () => {
    const pending = await store.domains.create({ accountId: a.id, host: 'wait.one.test', txtValue: 'svc-verify-abc' });
    const decision = await check(a, 'wait.one.test', 'www');
    assert.deepEqual(decision, { ok: false, message: domainPendingMessage(pending) });
    assert.ok(!decision.ok && decision.message.includes('state: pending'));
    assert.ok(!decision.ok && decision.message.includes('_svcrouter.wait.one.test'));
    assert.ok(!decision.ok && decision.message.includes(`/v1/domains/${pending.id}/verify`));
  });

  it("refuses another account's verified domain, and a name covered by another account's more specific domain", async () => {
    await verified(b, 'shop.two.test');
    assert.deepEqual(await check(a, 'shop.two.test'), { ok: false, message: domainOtherAccountMessage('shop.two.test') });
    await verified(a, 'two.test');
    assert.deepEqual(await check(a, 'two.test'), { ok: true, hostname: 'two.test' });
    assert.deepEqual(await check(a, 'two.test', 'shop'), { ok: false, message: domainOtherAccountMessage('shop.two.test') });
  });

  it('refuses invalid hosts, shared-domain names and bad subdomains with a reason', async () => {
    for (const [domain, sub] of [
      ['127.0.0.1', undefined],
      ['x.localhost', undefined],
      ['app.one.test', 'bad_label'],
    ] as const) {
      const decision = await check(a, domain, sub);
      assert.ok(!decision.ok, domain);
      assert.ok(decision.message.length > 20);
    }
    assert.deepEqual(await check(a, 'app.one.test', 'bad_label'), { ok: false, message: BindMessages.subdomainInvalid('bad_label') });
  });

  it('ownsCustomHost follows the most specific verified domain', async () => {
    assert.equal(await ownsCustomHost(store.domains, a.id, 'x.app.one.test'), true);
    assert.equal(await ownsCustomHost(store.domains, b.id, 'x.app.one.test'), false);
    assert.equal(await ownsCustomHost(store.domains, a.id, 'shop.two.test'), false);
    assert.equal(await ownsCustomHost(store.domains, a.id, 'unknown.test'), false);
  });

  it('isAtOrUnder matches whole labels only', () => {
    assert.ok(isAtOrUnder('a.example.com', 'example.com'));
    assert.ok(isAtOrUnder('example.com', 'example.com'));
    assert.ok(!isAtOrUnder('badexample.com', 'example.com'));
  });
});
