import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, StoreConflictError, type Store } from '../store/index.js';
import { AccountInputError, createAccountWithToken, FIRST_TOKEN_DESCRIPTION } from './accounts.js';
import { createAuthenticator } from './authenticate.js';
import { hashToken, isWellFormedToken } from './tokens.js';

describe('createAccountWithToken', () => {
  let dir: string;
  let store: Store;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-accounts-'));
    store = await openStore({ dataDir: dir });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a free account named after the email, with a working first token', async () => {
    const { account, token } = await createAccountWithToken(store, { email: 'Ada@Example.com' });
    assert.equal(account.email, 'ada@example.com');
    assert.equal(account.name, 'ada');
    assert.equal(account.plan, 'free');
    assert.equal(isWellFormedToken(token), true);
    assert.equal((await createAuthenticator(store)(token))?.account.id, account.id);
  });

  it('stores only the token hash and display prefix', async () => {
    const { account, token } = await createAccountWithToken(store, { email: 'hash@example.com' });
    const [key] = await store.keys.listForAccount(account.id);
    assert.equal(key?.tokenHash, hashToken(token));
    assert.equal(key?.prefix, token.slice(0, 12));
    assert.equal(key?.description, FIRST_TOKEN_DESCRIPTION);
  });

  it('uses the given name and plan', async () => {
    const { account } = await createAccountWithToken(store, { email: 'pro@example.com', name: 'Pro User', plan: 'pro' });
    assert.equal(account.name, 'Pro User');
    assert.equal(account.plan, 'pro');
  });

  it('accepts loopback-style addresses such as local@svcrouter.localhost', async () => {
    const { account } = await createAccountWithToken(store, { email: 'local@svcrouter.localhost' });
    assert.equal(account.name, 'local');
  });

  for (const email of [
    '',
    'plain',
    '@example.com',
    'a@',
    'a b@example.com',
    ' a@example.com',
    'a@@example.com',
    '"a"@example.com',
    'a@example..com',
  ]) {
    it(`rejects the email ${JSON.stringify(email)} and stores nothing`, async () => {
      const initial = await store.accounts.count();
      await assert.rejects(createAccountWithToken(store, { email }), AccountInputError);
      assert.equal(await store.accounts.count(), initial);
    });
  }

  it('rejects an unknown plan', async () => {
    await assert.rejects(createAccountWithToken(store, { email: 'ent@example.com', plan: 'enterprise' }), /invalid plan/);
  });

  it('rejects a blank name', async () => {
    await assert.rejects(createAccountWithToken(store, { email: 'blank@example.com', name: '  ' }), /invalid name/);
  });

  it('throws StoreConflictError for a taken email', async () => {
    await createAccountWithToken(store, { email: 'taken@example.com' });
    await assert.rejects(createAccountWithToken(store, { email: 'TAKEN@example.com' }), StoreConflictError);
  });
});
