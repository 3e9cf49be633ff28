import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as timer } from 'node:timers/promises';
import { Messages } from '@svcrouter/protocol';
import { runAgent, startAgent, startOrigin, startServer, type TestOrigin, type TestServer } from './harness/index.js';
import { apiClient, eventually, openApi } from './harness/api-helpers.js';

// Agent tokens over the API: create (secret once), list (metadata only), revoke (the API
// refuses the token at once, connected agents are dropped within 5 s and cannot come back),
// and the last active key, which cannot be revoked.

interface KeyView {
  id: string;
  description: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
}
/** Revocation reaches connected agents within this bound (the requirement, not a speed claim). */
const DROP_BOUND_MS = 5000;

describe('REST API: keys', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let api: ReturnType<typeof apiClient>;
  let token: string;

  before(async () => {
    server = await startServer();
    token = server.token!;
    origin = await startOrigin();
    api = apiClient(server, await openApi(server));
  });
  after(async () => {
    await origin?.close();
    await server?.close();
  });

  async function createKey(description?: string, as = token): Promise<KeyView & { token: string }> {
    const res = await api('POST', '/v1/keys', { token: as }, description === undefined ? undefined : { description });
    assert.equal(res.status, 201, res.text);
    return res.body as KeyView & { token: string };
  }

  it('POST /v1/keys answers 201 with the metadata and the secret', async () => {
    const key = await createKey('laptop');
    assert.deepEqual(Object.keys(key).sort(), ['createdAt', 'description', 'id', 'lastUsedAt', 'prefix', 'token']);
    assert.match(key.token, /^svc_[A-Za-z0-9_-]{43}$/);
    assert.equal(key.prefix, key.token.slice(0, key.prefix.length));
    assert.equal(key.description, 'laptop');
    assert.equal(key.lastUsedAt, null);
    assert.equal((await api('GET', '/v1/me', { token: key.token })).status, 200);
  });

  it('GET /v1/keys lists metadata only, never a secret, and tracks lastUsedAt', async () => {
    const key = await createKey('listed');
    const before = (await api('GET', '/v1/keys', { token })).body as { keys: KeyView[] };
    assert.ok(before.keys.some((k) => k.id === key.id && k.description === 'listed'));
    for (const k of before.keys) assert.deepEqual(Object.keys(k).sort(), ['createdAt', 'description', 'id', 'lastUsedAt', 'prefix']);
    await api('GET', '/v1/me', { token: key.token });
    const listed = await eventually(
      () => api('GET', '/v1/keys', { token }),
      (r) => (r.body as { keys: KeyView[] }).keys.some((k) => k.id === key.id && k.lastUsedAt !== null),
      'lastUsedAt recorded',
    );
    assert.ok(!listed.text.includes(key.token));
  });

  it('validates the body: description of at most 200 characters, no unknown fields', async () => {
    const long = await api('POST', '/v1/keys', { token }, { description: 'x'.repeat(201) });
    assert.equal(long.status, 400);
    assert.match((long.body as { message: string }).message, /"description" must be at most 200 characters/);
    const extra = await api('POST', '/v1/keys', { token }, { description: 'ok', expiresAt: '2030-01-01' });
    assert.equal(extra.status, 400);
    assert.match((extra.body as { message: string }).message, /unknown body field "expiresAt"/);
    assert.equal((await createKey(undefined)).description, '');
  });

  it('DELETE /v1/keys/:id: the token is refused at once and its agent is dropped within 5 s for good', async () => {
    const key = await createKey('agent key');
    const agent = await startAgent(server, { token: key.token, target: origin.port });
    const revoked = await api('DELETE', `/v1/keys/${key.id}`, { token });
    assert.equal(revoked.status, 204);
    assert.equal(revoked.text, '');

    const bound = new AbortController();
    const exit = await Promise.race([agent.proc.exited, timer(DROP_BOUND_MS, 'timeout' as const, { signal: bound.signal })]);
    bound.abort();
    assert.notEqual(exit, 'timeout', `agent still running ${DROP_BOUND_MS} ms after revocation`);
    assert.equal((exit as { code: number | null }).code, 1);
    assert.ok(agent.proc.output.includes(Messages.TOKEN_INVALID), agent.proc.output);

    const refused = await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${key.token}` } });
    assert.equal(refused.status, 401);
    assert.equal(await refused.text(), '{"error":"unauthorized"}');
    const again = await runAgent(['http', String(origin.port)], { SVC_TOKEN: key.token, SVC_SERVER: server.url });
    assert.equal(again.code, 1);
    assert.match(`${again.stdout}\n${again.stderr}`, new RegExp(Messages.TOKEN_INVALID));
    const keys = (await api('GET', '/v1/keys', { token })).body as { keys: KeyView[] };
    assert.ok(!keys.keys.some((k) => k.id === key.id));
    assert.equal((await api('DELETE', `/v1/keys/${key.id}`, { token })).status, 404);
  });

  it('a key may revoke itself while another remains', async () => {
    const key = await createKey('self');
    assert.equal((await api('DELETE', `/v1/keys/${key.id}`, { token: key.token })).status, 204);
    assert.equal((await api('GET', '/v1/me', { token: key.token })).status, 401);
  });

  it('refuses to revoke the last active key with 409 and a way out', async () => {
    const lone = await server.createAccount('lone@example.com');
    const keys = (await api('GET', '/v1/keys', { token: lone })).body as { keys: KeyView[] };
    assert.equal(keys.keys.length, 1);
    const res = await api('DELETE', `/v1/keys/${keys.keys[0]!.id}`, { token: lone });
    assert.equal(res.status, 409);
    const body = res.body as { error: string; message: string };
    assert.equal(body.error, 'last_active_key');
    assert.match(body.message, /POST \/v1\/keys/);
    assert.match(body.message, /svc-server account link --email E/);
    assert.equal((await api('GET', '/v1/me', { token: lone })).status, 200);
  });

  it('revokes the last active key of an account that has a password (it can sign in and make another)', async () => {
    const lone = await server.createAccount('lone-with-password@example.com');
    const keys = (await api('GET', '/v1/keys', { token: lone })).body as { keys: KeyView[] };
    assert.equal((await api('POST', '/v1/me/password', { token: lone }, { newPassword: 'a dashboard password' })).status, 204);
    assert.equal((await api('DELETE', `/v1/keys/${keys.keys[0]!.id}`, { token: lone })).status, 204);
    assert.equal((await api('GET', '/v1/me', { token: lone })).status, 401);
  });

  it("answers 404 for another account's key and leaves it working", async () => {
    const other = await server.createAccount('other-keys@example.com');
    const theirs = ((await api('GET', '/v1/keys', { token: other })).body as { keys: KeyView[] }).keys[0]!;
    const res = await api('DELETE', `/v1/keys/${theirs.id}`, { token });
    assert.equal(res.status, 404);
    assert.ok(!res.text.includes(theirs.id));
    assert.equal((await api('GET', '/v1/me', { token: other })).status, 200);
  });
});
