import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { AccessRequest, Identity, Reply, SignInRules } from '../policy/index.js';
import type { OidcRepo } from '../store/index.js';
import { Gate, LOGOUT_PATH } from './gate.js';
import { IdentityTokens } from './identity-tokens.js';
import { Providers } from './providers.js';
import { REVOCATIONS_STALE_MS, Revocations } from './revocations.js';
import { SESSION_COOKIE, SessionCookies, edgeCookieName, type Session } from './session-cookie.js';
import { ownerDigest, Tickets } from './tickets.js';

// The tunnel host's gate with a signed-in cookie: sign-out, a copy replayed, the provider the
// session was made with, and the 503 of a node that could not read the sign-outs for too long.
// The store is a collaborator in memory; nothing here talks to a provider.
describe('single sign-on gate: sessions and sign-out', () => {
  const T = 1_800_000_000_000;
  const HOST = 'app.tunnels.test';
  const rules: SignInRules = { provider: 'idp', owner: 'acc_owner', emails: new Set(), domains: new Set() };
  const privateKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

  function setup() {
    const rows: Array<{ sessionId: string; revokedAt: number; expiresAt: number }> = [];
    const state = { now: T, failing: false };
    const out = async () => {
      if (state.failing) throw new Error('store unavailable');
    };
    const repo = {
      async revokeSession(row: { sessionId: string; revokedAt: number; expiresAt: number }) {
        await out();
        rows.push(row);
      },
      async revokedSince(since: number, at: number) {
        await out();
        return rows.filter((r) => r.revokedAt >= since && r.expiresAt > at);
      },
    } as unknown as OidcRepo;
    const log = pino({ level: 'silent' });
    const revocations = new Revocations({ repo, log, now: () => state.now });
    const cookies = new SessionCookies(randomBytes(32));
    const gate = new Gate({
      providers: new Providers([{ name: 'idp', issuer: 'https://idp.test', clientId: 'c', clientSecret: 's' }]),
      tickets: new Tickets(repo),
      cookies,
      tokens: new IdentityTokens({ signingKey: () => ({ kid: 'k1', privateKey }) }, () => 'https://tunnels.test'),
      revocations,
      callbackUrl: (name) => `https://tunnels.test/auth/oidc/${name}/callback`,
      sessionMs: 3_600_000,
      log,
      now: () => state.now,
    });
    const session = (provider = 'idp', owner = 'acc_owner'): string =>
      cookies.seal({
        id: randomBytes(8).toString('hex'),
        host: HOST,
        provider,
        owner: ownerDigest(owner),
        sub: 's',
        email: 'a@example.com',
        expiresAt: T + 3_600_000,
      } satisfies Session);
    // Over HTTPS unless said otherwise, with the cookie under the name the edge gives it there.
    const request = (cookie: string, path = '/data', secure = true, cookieHeader?: string): AccessRequest => ({
      ip: '127.0.0.1',
      headers: [
        'host',
        HOST,
        'accept',
        'application/json',
        'cookie',
        cookieHeader ?? `${edgeCookieName(SESSION_COOKIE, secure)}=${cookie}`,
      ],
      method: 'GET',
      path,
      host: HOST,
      secure,
    });
    return { gate, revocations, state, rows, session, request };
  }
  const statusOf = (verdict: Identity | Reply): number => ('status' in verdict ? verdict.status : 200);

  it('signs a session out on the server: the cookie and every copy are refused, the sign-out is stored', async () => {
    const { gate, revocations, rows, session, request } = setup();
    await revocations.poll();
    const cookie = session();
    assert.equal(statusOf(await gate.admit(request(cookie), rules)), 200);
    const out = (await gate.admit(request(cookie, LOGOUT_PATH), rules)) as Reply;
    assert.equal(out.status, 200);
    assert.equal(out.headers['set-cookie'], '__Host-svc_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure');
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.expiresAt, T + 3_600_000, 'kept until the session would have expired');
    assert.equal(statusOf(await gate.admit(request(cookie), rules)), 401);
  });

  it('keeps the cookie and says so when the store cannot take the sign-out', async () => {
    const { gate, revocations, state, session, request } = setup();
    await revocations.poll();
    const cookie = session();
    state.failing = true;
    const out = (await gate.admit(request(cookie, LOGOUT_PATH), rules)) as Reply;
    assert.equal(out.status, 503);
    assert.match(out.body, /Sign-out unavailable/);
    assert.equal(out.headers['set-cookie'], undefined);
  });

  it('treats a session made with another provider, or while another account held the host, as no session', async () => {
    const { gate, revocations, session, request } = setup();
    await revocations.poll();
    assert.equal(statusOf(await gate.admit(request(session('idp', 'acc_owner')), rules)), 200);
    assert.equal(statusOf(await gate.admit(request(session('other')), rules)), 401);
    assert.equal(statusOf(await gate.admit(request(session('idp', 'acc_before')), rules)), 401);
  });

  it('answers 503 to a signed-in request once the sign-outs have gone unread past the bound, and admits again after a read', async () => {
    const { gate, revocations, state, session, request } = setup();
    await revocations.poll();
    const cookie = session();
    state.now = T + REVOCATIONS_STALE_MS + 1;
    const refused = (await gate.admit(request(cookie), rules)) as Reply;
    assert.equal(refused.status, 503);
    assert.match(refused.body, /Sign-in check unavailable/);
    assert.equal(refused.headers['retry-after'], '5');
    await revocations.poll();
    assert.equal(statusOf(await gate.admit(request(cookie), rules)), 200);
  });

  it('reads the session cookie under the name of the scheme: __Host- over HTTPS, where no other host can set it', async () => {
    const { gate, revocations, session, request } = setup();
    await revocations.poll();
    const cookie = session();
    assert.equal(statusOf(await gate.admit(request(cookie), rules)), 200);
    assert.equal(statusOf(await gate.admit(request(cookie, '/data', false), rules)), 200, 'plain HTTP, its own name');
    // Over HTTPS a cookie without the prefix may come from any host of the shared domain: not taken.
    assert.equal(statusOf(await gate.admit(request(cookie, '/data', true, `${SESSION_COOKIE}=${cookie}`), rules)), 401);
    const out = (await gate.admit(request(cookie, LOGOUT_PATH, false), rules)) as Reply;
    assert.equal(out.headers['set-cookie'], '__svc_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax');
  });

  it('takes no session cookie sent twice: one of them was set by another host, and which cannot be told', async () => {
    const { gate, revocations, session, request } = setup();
    await revocations.poll();
    const cookie = session();
    for (const secure of [false, true]) {
      const name = edgeCookieName(SESSION_COOKIE, secure);
      for (const header of [`${name}=junk; ${name}=${cookie}`, `${name}=${cookie}; a=1; ${name}=${cookie}`]) {
        assert.equal(statusOf(await gate.admit(request(cookie, '/data', secure, header), rules)), 401, header);
      }
      assert.equal(statusOf(await gate.admit(request(cookie, '/data', secure, `a=1; ${name}=${cookie}; b=2`), rules)), 200);
    }
  });
});
