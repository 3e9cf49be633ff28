import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../store/index.js';
import { setAccountPassword } from './accounts.js';
import { DashboardSessions, SESSION_LIFETIME_MS } from './dashboard-sessions.js';
import { verifyPassword } from './password.js';
import { consumeSignInLink, createSignInLink, LINK_LIFETIME_MS, signInLinkUrl } from './sign-in-links.js';
import { hashToken } from './tokens.js';

// Sessions and links over a real SQLite store, with a clock the tests move.
describe('dashboard sessions and sign-in links', () => {
  let dir: string;
  let store: Store;
  let clock = 1_800_000_000_000;
  const now = () => clock;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-auth-'));
    store = await openStore({ dataDir: dir });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  let n = 0;
  const account = () => store.accounts.create({ email: `s${++n}@example.com`, name: 'S', plan: 'free' });

  it('a session resolves by its cookie value, stores only its hash, and expires after 14 days', async () => {
    const sessions = new DashboardSessions(store, now);
    const a = await account();
    const { cookieValue, session } = await sessions.create(a.id);
    assert.match(cookieValue, /^svs_[A-Za-z0-9_-]{43}$/);
    assert.equal(session.tokenHash, hashToken(cookieValue));
    assert.equal(session.expiresAt, clock + SESSION_LIFETIME_MS);
    assert.ok(session.csrfToken.length >= 43);
    assert.deepEqual((await sessions.resolve(cookieValue))?.account, a);
    // One character changed (never to itself: a value that already ends in A gets a B).
    assert.equal(await sessions.resolve(`${cookieValue.slice(0, -1)}${cookieValue.endsWith('A') ? 'B' : 'A'}`), undefined);
    assert.equal(await sessions.resolve('svs_short'), undefined);
    clock += SESSION_LIFETIME_MS;
    assert.equal(await sessions.resolve(cookieValue), undefined, 'expired');
  });

  it('end signs one browser out', async () => {
    const sessions = new DashboardSessions(store, now);
    const a = await account();
    const one = await sessions.create(a.id);
    const two = await sessions.create(a.id);
    await sessions.end(one.session);
    assert.equal(await sessions.resolve(one.cookieValue), undefined);
    assert.ok(await sessions.resolve(two.cookieValue));
  });

  it('setAccountPassword stores a verifiable hash and ends the other sessions only', async () => {
    const sessions = new DashboardSessions(store, now);
    const a = await account();
    const keep = await sessions.create(a.id);
    const other = await sessions.create(a.id);
    await setAccountPassword(store, a.id, 'a new password', keep.session.tokenHash);
    assert.equal(await verifyPassword('a new password', (await store.accounts.passwordHash(a.id))!), true);
    assert.ok(await sessions.resolve(keep.cookieValue));
    assert.equal(await sessions.resolve(other.cookieValue), undefined);
  });

  it('a link works once, within 30 minutes', async () => {
    const a = await account();
    const token = await createSignInLink(store, a.id, now);
    assert.match(token, /^svl_[A-Za-z0-9_-]{43}$/);
    assert.equal(signInLinkUrl('http://localhost:8080', token), `http://localhost:8080/welcome#token=${token}`);
    assert.equal(await consumeSignInLink(store, token, now), a.id);
    assert.equal(await consumeSignInLink(store, token, now), undefined);
    const late = await createSignInLink(store, a.id, now);
    clock += LINK_LIFETIME_MS;
    assert.equal(await consumeSignInLink(store, late, now), undefined);
    assert.equal(await consumeSignInLink(store, 'svl_malformed', now), undefined);
  });
});
