import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Messages } from '@svcrouter/protocol';
import { hashToken } from '../auth/index.js';
import { CreatedKey, KeyList } from './schemas.js';
import { LAST_KEY_MESSAGE } from './routes-keys.js';
import { startApiFixture, type ApiFixture } from './test-support.js';

describe('key routes', () => {
  let api: ApiFixture;
  before(async () => {
    api = await startApiFixture();
  });
  after(() => api.close());

  it('creates a key: 201 with the metadata and the secret, and stores only its hash', async () => {
    const res = await api.call('POST', '/v1/keys', { body: { description: 'ci runner' } });
    assert.equal(res.status, 201);
    const key = CreatedKey.parse(res.body);
    assert.equal(key.description, 'ci runner');
    assert.equal(key.prefix, key.token.slice(0, 12));
    assert.equal(key.lastUsedAt, null);
    const stored = await api.store.keys.byTokenHash(hashToken(key.token));
    assert.equal(stored?.id, key.id);
    assert.equal(stored?.accountId, api.a.account.id);
  });

  it('creates a key without a body (description empty)', async () => {
    const res = await api.call('POST', '/v1/keys');
    assert.equal(res.status, 201);
    assert.equal(CreatedKey.parse(res.body).description, '');
  });

  it('rejects a description over 200 characters, naming the field', async () => {
    const res = await api.call('POST', '/v1/keys', { body: { description: 'x'.repeat(201) } });
    assert.equal(res.status, 400);
    assert.equal((res.body as { message: string }).message, 'body field "description" must be at most 200 characters');
  });

  it('lists metadata only: no token, no hash', async () => {
    const created = CreatedKey.parse((await api.call('POST', '/v1/keys', { body: { description: 'listed' } })).body);
    const res = await api.call('GET', '/v1/keys');
    const list = KeyList.parse(res.body);
    assert.ok(list.keys.some((key) => key.id === created.id));
    assert.ok(!res.text.includes(created.token));
    assert.ok(!res.text.includes(hashToken(created.token)));
  });

  it('revokes a key: 204, the token stops working at once, its sessions are dropped with the agent message', async () => {
    const created = CreatedKey.parse((await api.call('POST', '/v1/keys', { body: { description: 'doomed' } })).body);
    assert.equal((await api.call('GET', '/v1/me', { token: created.token })).status, 200);
    const res = await api.call('DELETE', `/v1/keys/${created.id}`);
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    assert.equal((await api.call('GET', '/v1/me', { token: created.token })).status, 401);
    assert.deepEqual(api.dropped.at(-1), { keyId: created.id, message: Messages.TOKEN_INVALID });
    assert.ok(!KeyList.parse((await api.call('GET', '/v1/keys')).body).keys.some((key) => key.id === created.id));
  });

  it('answers 404 for a key already revoked', async () => {
    const created = CreatedKey.parse((await api.call('POST', '/v1/keys')).body);
    assert.equal((await api.call('DELETE', `/v1/keys/${created.id}`)).status, 204);
    assert.equal((await api.call('DELETE', `/v1/keys/${created.id}`)).status, 404);
  });

  it("answers 404 for another account's key and leaves it working", async () => {
    const bKeys = KeyList.parse((await api.call('GET', '/v1/keys', { token: api.b.token })).body).keys;
    const target = bKeys[0]!;
    const res = await api.call('DELETE', `/v1/keys/${target.id}`);
    assert.equal(res.status, 404);
    assert.ok(!res.text.includes(target.id));
    assert.equal((await api.call('GET', '/v1/me', { token: api.b.token })).status, 200);
  });

  it('refuses to revoke the last active key with 409 and says how to recover', async () => {
    const bKeys = KeyList.parse((await api.call('GET', '/v1/keys', { token: api.b.token })).body).keys;
    assert.equal(bKeys.length, 1);
    const res = await api.call('DELETE', `/v1/keys/${bKeys[0]!.id}`, { token: api.b.token });
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, { error: 'last_active_key', message: LAST_KEY_MESSAGE });
    assert.match(LAST_KEY_MESSAGE, /POST \/v1\/keys/);
    assert.match(LAST_KEY_MESSAGE, /POST \/v1\/me\/password/);
    assert.match(LAST_KEY_MESSAGE, /svc-server account link --email E/);
  });

  it('revokes the last active key once the account has a password (it can still sign in)', async () => {
    const bKeys = KeyList.parse((await api.call('GET', '/v1/keys', { token: api.b.token })).body).keys;
    assert.equal(
      (await api.call('POST', '/v1/me/password', { token: api.b.token, body: { newPassword: 'bob has a password' } })).status,
      204,
    );
    assert.equal((await api.call('DELETE', `/v1/keys/${bKeys[0]!.id}`, { token: api.b.token })).status, 204);
    assert.equal((await api.call('GET', '/v1/me', { token: api.b.token })).status, 401);
  });
});

describe('key revocation under concurrency', () => {
  let api: ApiFixture;
  // While armed, key reads wait until both parallel requests have been authenticated, so
  // without the route's own serialisation both would see two active keys.
  let arrivals = 0;
  let bothArrived: Promise<void> | undefined;
  let release: () => void = () => undefined;
  before(async () => {
    api = await startApiFixture({
      routeStore: (store) => ({
        ...store,
        keys: { ...store.keys, listForAccount: async (id) => (await bothArrived, store.keys.listForAccount(id)) },
      }),
      // Every call acts as account b through b's first active key, so both parallel calls
      // reach the handler whatever the other one did.
      authenticate:
        (store, { b }) =>
        async () => {
          if (bothArrived && ++arrivals === 2) release();
          const [key] = await store.keys.listForAccount(b.account.id);
          return key && { account: b.account, key };
        },
    });
  });
  after(() => api.close());

  it('lets only one of two parallel revocations of the last two keys through', async () => {
    const first = KeyList.parse((await api.call('GET', '/v1/keys')).body).keys[0]!;
    const second = CreatedKey.parse((await api.call('POST', '/v1/keys')).body);
    bothArrived = new Promise<void>((resolve) => (release = resolve));
    const results = await Promise.all([api.call('DELETE', `/v1/keys/${first.id}`), api.call('DELETE', `/v1/keys/${second.id}`)]);
    assert.deepEqual(results.map((r) => r.status).sort(), [204, 409]);
    assert.equal(await api.store.keys.countActive(api.b.account.id), 1);
  });
});
