import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSignInLink } from '../auth/index.js';
import { CSRF_MESSAGE } from './request-auth.js';
import { startApiFixture, type ApiFixture } from './test-support.js';

// The /auth routes and the session cookie through the real front door, over a real SQLite store.

interface Browser {
  cookie: string;
  csrf: string;
}

/** The `svc_session=…` pair of a Set-Cookie answer. */
function cookieOf(headers: Headers): string {
  const set = headers.get('set-cookie') ?? '';
  const pair = set.split(';')[0]!;
  assert.match(pair, /^svc_session=svs_[A-Za-z0-9_-]{43}$/);
  return pair;
}

describe('dashboard sign-in routes', () => {
  let api: ApiFixture;
  before(async () => {
    api = await startApiFixture();
  });
  after(async () => {
    await api.close();
  });
  let n = 0;
  const email = () => `user${++n}-${Date.now()}@example.com`;

  async function signUp(address = email(), password = 'a long password'): Promise<Browser & { email: string }> {
    const res = await api.call('POST', '/auth/signup', { token: null, body: { email: address, password } });
    assert.equal(res.status, 201, res.text);
    return { email: address, cookie: cookieOf(res.headers), csrf: (res.body as { csrfToken: string }).csrfToken };
  }
  const asBrowser = (browser: Browser, extra: Record<string, string> = {}) => ({
    token: null,
    headers: { cookie: browser.cookie, ...extra },
  });

  it('sign-up sets a host-only HttpOnly Lax cookie (no Secure over plain HTTP) and answers the account', async () => {
    const address = email();
    const res = await api.call('POST', '/auth/signup', { token: null, body: { email: address, password: 'a long password', name: 'Dee' } });
    assert.equal(res.status, 201);
    const set = res.headers.get('set-cookie')!;
    assert.match(set, /^svc_session=svs_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=1209600$/);
    const body = res.body as { account: { email: string; name: string; plan: string }; csrfToken: string };
    assert.equal(body.account.email, address);
    assert.equal(body.account.name, 'Dee');
    assert.equal(body.account.plan, 'free');
    // No agent token is created with the account.
    const keys = await api.call('GET', '/v1/keys', { token: null, headers: { cookie: cookieOf(res.headers) } });
    assert.deepEqual(keys.body, { keys: [] });
  });

  it('sign-up refuses short passwords, bad and taken emails with the contract messages', async () => {
    const short = await api.call('POST', '/auth/signup', { token: null, body: { email: email(), password: 'short' } });
    assert.deepEqual([short.status, short.body], [400, { error: 'invalid_request', message: 'password must be at least 8 characters' }]);
    const bad = await api.call('POST', '/auth/signup', { token: null, body: { email: 'not an email', password: 'long enough' } });
    assert.equal(bad.status, 400);
    assert.equal((bad.body as { error: string }).error, 'invalid_request');
    const taken = await api.call('POST', '/auth/signup', {
      token: null,
      body: { email: api.a.account.email.toUpperCase(), password: 'long enough' },
    });
    assert.deepEqual([taken.status, taken.body], [409, { error: 'email_taken', message: 'an account with this email already exists' }]);
  });

  it('GET /auth/session tells signed-out from signed-in, with the CSRF token', async () => {
    assert.deepEqual((await api.call('GET', '/auth/session', { token: null })).body, { signedIn: false, signup: 'open' });
    const browser = await signUp();
    const state = (await api.call('GET', '/auth/session', asBrowser(browser))).body as Record<string, unknown>;
    assert.equal(state.signedIn, true);
    assert.equal(state.csrfToken, browser.csrf);
    assert.equal(state.hasPassword, true);
    assert.equal((state.account as { email: string }).email, browser.email);
  });

  it('the cookie authenticates /v1 reads; an Authorization header, when present, is the only credential', async () => {
    const browser = await signUp();
    const me = await api.call('GET', '/v1/me', asBrowser(browser));
    assert.equal((me.body as { email: string }).email, browser.email);
    const wrongBearer = await api.call('GET', '/v1/me', { token: 'svc_wrong', headers: { cookie: browser.cookie } });
    assert.deepEqual([wrongBearer.status, wrongBearer.body], [401, { error: 'unauthorized' }]);
    const otherBearer = await api.call('GET', '/v1/me', { token: api.a.token, headers: { cookie: browser.cookie } });
    assert.equal((otherBearer.body as { email: string }).email, api.a.account.email);
  });

  it('CSRF: a cookie POST needs X-CSRF-Token and a same Origin; bearer requests are exempt', async () => {
    const browser = await signUp();
    const refused = { error: 'csrf_failed', message: CSRF_MESSAGE };
    const bare = await api.call('POST', '/v1/keys', { ...asBrowser(browser), body: { description: 'x' } });
    assert.deepEqual([bare.status, bare.body], [403, refused]);
    const wrong = await api.call('POST', '/v1/keys', {
      ...asBrowser(browser, { 'x-csrf-token': `${browser.csrf}x` }),
      body: { description: 'x' },
    });
    assert.equal(wrong.status, 403);
    const foreign = await api.call('POST', '/v1/keys', {
      ...asBrowser(browser, { 'x-csrf-token': browser.csrf, origin: 'http://evil.svc.test' }),
      body: { description: 'x' },
    });
    assert.deepEqual([foreign.status, foreign.body], [403, refused]);
    const sameOrigin = await api.call('POST', '/v1/keys', {
      ...asBrowser(browser, { 'x-csrf-token': browser.csrf, origin: api.url }),
      body: { description: 'ok' },
    });
    assert.equal(sameOrigin.status, 201);
    const noOrigin = await api.call('POST', '/v1/keys', {
      ...asBrowser(browser, { 'x-csrf-token': browser.csrf }),
      body: { description: 'ok' },
    });
    assert.equal(noOrigin.status, 201);
    const bearer = await api.call('POST', '/v1/keys', { body: { description: 'bearer' }, headers: { origin: 'http://evil.svc.test' } });
    assert.equal(bearer.status, 201);
  });

  it('sign-out deletes the session: the old cookie is then refused', async () => {
    const browser = await signUp();
    assert.equal((await api.call('POST', '/auth/signout', asBrowser(browser))).status, 403, 'sign-out needs the CSRF token too');
    const out = await api.call('POST', '/auth/signout', asBrowser(browser, { 'x-csrf-token': browser.csrf }));
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie')!, /^svc_session=; .*Max-Age=0/);
    assert.deepEqual((await api.call('GET', '/v1/me', asBrowser(browser))).body, { error: 'unauthorized' });
  });

  it('a sign-in link sets the password and signs in once; a short password does not spend it', async () => {
    const token = await createSignInLink(api.store, api.a.account.id);
    const short = await api.call('POST', '/auth/link', { token: null, body: { token, password: 'short' } });
    assert.equal(short.status, 400);
    const used = await api.call('POST', '/auth/link', { token: null, body: { token, password: 'ann sets a password' } });
    assert.equal(used.status, 200, used.text);
    cookieOf(used.headers);
    const again = await api.call('POST', '/auth/link', { token: null, body: { token, password: 'ann sets a password' } });
    assert.deepEqual(again.body, {
      error: 'link_invalid',
      message: 'this sign-in link is invalid or has expired; run `svc-server account link --email E` for a new one',
    });
    const signIn = await api.call('POST', '/auth/signin', {
      token: null,
      body: { email: api.a.account.email, password: 'ann sets a password' },
    });
    assert.equal(signIn.status, 200);
  });

  it('POST /v1/me/password checks the current password and signs the other browsers out', async () => {
    const first = await signUp(email(), 'first password');
    const signIn = await api.call('POST', '/auth/signin', { token: null, body: { email: first.email, password: 'first password' } });
    const second = { cookie: cookieOf(signIn.headers), csrf: (signIn.body as { csrfToken: string }).csrfToken };
    const wrong = await api.call('POST', '/v1/me/password', {
      ...asBrowser(first, { 'x-csrf-token': first.csrf }),
      body: { currentPassword: 'not it at all', newPassword: 'second password' },
    });
    assert.deepEqual([wrong.status, wrong.body], [403, { error: 'invalid_credentials', message: 'current password is wrong' }]);
    const missing = await api.call('POST', '/v1/me/password', {
      ...asBrowser(first, { 'x-csrf-token': first.csrf }),
      body: { newPassword: 'second password' },
    });
    assert.equal(missing.status, 403);
    const changed = await api.call('POST', '/v1/me/password', {
      ...asBrowser(first, { 'x-csrf-token': first.csrf }),
      body: { currentPassword: 'first password', newPassword: 'second password' },
    });
    assert.equal(changed.status, 204);
    assert.equal((await api.call('GET', '/v1/me', asBrowser(first))).status, 200, 'the browser that changed it stays signed in');
    assert.equal((await api.call('GET', '/v1/me', asBrowser(second))).status, 401, 'the other browser is signed out');
  });

  it('the auth routes are in the OpenAPI document as public operations', async () => {
    const doc = (await api.call('GET', '/v1/openapi.json', { token: null })).body as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    for (const path of ['/auth/session', '/auth/signup', '/auth/signin', '/auth/signout', '/auth/link']) {
      const op = Object.values(doc.paths[path] ?? {})[0];
      assert.deepEqual(op?.security, [], path);
    }
    assert.ok(doc.paths['/v1/me/password']?.post);
  });
});

describe('failed sign-in limits', () => {
  let api: ApiFixture;
  before(async () => {
    // Small limits, and a fixture of its own: the client IP's count would block other suites.
    api = await startApiFixture({ signInLimits: { perAccount: 3, perIp: 5, windowMs: 60_000 } });
  });
  after(async () => {
    await api.close();
  });
  let n = 0;
  const email = () => `limit${++n}-${Date.now()}@example.com`;
  async function signUp(address: string, password: string): Promise<{ email: string }> {
    const res = await api.call('POST', '/auth/signup', { token: null, body: { email: address, password } });
    assert.equal(res.status, 201, res.text);
    return { email: address };
  }

  it('sign-in: right password signs in, wrong one is 401, and the limit answers 429 with Retry-After', async () => {
    const { email: address } = await signUp(email(), 'the right password');
    const ok = await api.call('POST', '/auth/signin', {
      token: null,
      body: { email: address.toUpperCase(), password: 'the right password' },
    });
    assert.equal(ok.status, 200);
    cookieOf(ok.headers);
    for (let i = 0; i < 3; i++) {
      const bad = await api.call('POST', '/auth/signin', { token: null, body: { email: address, password: 'the wrong password' } });
      assert.deepEqual([bad.status, bad.body], [401, { error: 'invalid_credentials', message: 'wrong email or password' }]);
    }
    const blocked = await api.call('POST', '/auth/signin', { token: null, body: { email: address, password: 'the right password' } });
    assert.equal(blocked.status, 429);
    assert.deepEqual(blocked.body, { error: 'too_many_attempts', message: 'too many failed sign-ins; try again in 1 minute' });
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    // Unknown emails count against the client IP: 2 more failures reach its limit of 5.
    for (let i = 0; i < 2; i++)
      assert.equal((await api.call('POST', '/auth/signin', { token: null, body: { email: email(), password: 'whatever1' } })).status, 401);
    assert.equal((await api.call('POST', '/auth/signin', { token: null, body: { email: email(), password: 'whatever1' } })).status, 429);
  });
});

describe('dashboard sign-in with SVC_SIGNUP=closed', () => {
  let api: ApiFixture;
  before(async () => {
    api = await startApiFixture({ signup: 'closed' });
  });
  after(async () => {
    await api.close();
  });

  it('refuses sign-up with 403 signup_closed and says so in /auth/session', async () => {
    const res = await api.call('POST', '/auth/signup', { token: null, body: { email: 'new@example.com', password: 'long enough' } });
    assert.deepEqual(
      [res.status, res.body],
      [403, { error: 'signup_closed', message: 'sign-up is closed on this server; ask its operator for an account' }],
    );
    assert.deepEqual((await api.call('GET', '/auth/session', { token: null })).body, { signedIn: false, signup: 'closed' });
  });
});
