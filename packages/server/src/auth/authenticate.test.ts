import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../store/index.js';
import { createAccountWithToken } from './accounts.js';
import { createAuthenticator, createBearerAuthenticator, TOUCH_INTERVAL_MS } from './authenticate.js';
import { generateToken, hashToken } from './tokens.js';

// A real SQLite store, wrapped only to count lookups and to hand the test the
// background touch promises so it can await them instead of sleeping.
interface Spied {
  store: Store;
  lookups: number;
  touches: Promise<void>[];
  failTouches: boolean;
}

function spy(store: Store): Spied {
  const spied: Spied = {
    lookups: 0,
    touches: [],
    failTouches: false,
    store: {
      ...store,
      keys: {
        ...store.keys,
        byTokenHash(hash) {
          spied.lookups++;
          return store.keys.byTokenHash(hash);
        },
        touch(id, at) {
          const p = spied.failTouches ? Promise.reject(new Error('disk full')) : store.keys.touch(id, at);
          spied.touches.push(p.catch(() => {}));
          return p;
        },
      },
    },
  };
  return spied;
}

describe('createAuthenticator', () => {
  let dir: string;
  let store: Store;
  let clock = 1_700_000_000_000;
  const now = (): number => clock;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-auth-'));
    store = await openStore({ dataDir: dir });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  let n = 0;
  const newToken = async () => createAccountWithToken(store, { email: `auth-${++n}@example.com` });

  it('resolves a valid token to its account and key', async () => {
    const { account, token } = await newToken();
    const identity = await createAuthenticator(store)(token);
    assert.deepEqual(identity?.account, account);
    assert.equal(identity?.key.tokenHash, hashToken(token));
  });

  it('rejects missing and malformed tokens without a database lookup', async () => {
    const { token } = await newToken();
    const s = spy(store);
    const authenticate = createAuthenticator(s.store);
    for (const bad of [undefined, '', `"${token}"`, ` ${token}`, `${token} `, `${token}\n`, token.slice(0, -1)]) {
      assert.equal(await authenticate(bad), undefined);
    }
    assert.equal(s.lookups, 0);
  });

  it('rejects a well-formed token that was never issued', async () => {
    assert.equal(await createAuthenticator(store)(generateToken().token), undefined);
  });

  it('rejects a revoked token', async () => {
    const { account, token } = await newToken();
    const authenticate = createAuthenticator(store);
    const identity = await authenticate(token);
    assert.ok(identity);
    assert.equal(await store.keys.revoke(account.id, identity.key.id), true);
    assert.equal(await authenticate(token), undefined);
  });

  it('touches lastUsedAt on first use, then at most once per interval per key', async () => {
    const { token } = await newToken();
    const s = spy(store);
    const authenticate = createAuthenticator(s.store, { now });
    await authenticate(token);
    await Promise.all(s.touches);
    assert.equal((await store.keys.byTokenHash(hashToken(token)))?.lastUsedAt, clock);
    const firstTouch = clock;

    clock += TOUCH_INTERVAL_MS - 1;
    await authenticate(token);
    assert.equal(s.touches.length, 1);

    clock += 1;
    await authenticate(token);
    assert.equal(s.touches.length, 2);
    await Promise.all(s.touches);
    assert.equal((await store.keys.byTokenHash(hashToken(token)))?.lastUsedAt, firstTouch + TOUCH_INTERVAL_MS);
  });

  it('a failing touch neither fails the request nor blocks the next attempt', async () => {
    const { token } = await newToken();
    const s = spy(store);
    s.failTouches = true;
    let report!: (err: unknown) => void;
    const reported = new Promise<unknown>((resolve) => (report = resolve));
    const authenticate = createAuthenticator(s.store, { now, onTouchError: (err) => report(err) });
    assert.ok(await authenticate(token));
    assert.equal(((await reported) as Error).message, 'disk full');

    s.failTouches = false;
    // Same clock time: only the cleared throttle mark lets this touch through.
    await authenticate(token);
    assert.equal(s.touches.length, 2);
    await Promise.all(s.touches);
    assert.equal((await store.keys.byTokenHash(hashToken(token)))?.lastUsedAt, clock);
  });
});

describe('createBearerAuthenticator', () => {
  it('authenticates the "Bearer <token>" header value and nothing else', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-auth-'));
    const store = await openStore({ dataDir: dir });
    try {
      const { account, token } = await createAccountWithToken(store, { email: 'bearer@example.com' });
      const authenticate = createBearerAuthenticator(store);
      assert.equal((await authenticate(`Bearer ${token}`))?.account.id, account.id);
      assert.equal(await authenticate(token), undefined);
      assert.equal(await authenticate(`Bearer  ${token}`), undefined);
      assert.equal(await authenticate(undefined), undefined);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
