import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { openStore, type Store } from '../store/index.js';
import { SQLITE_FILE } from '../store/engine/open-database.js';
import { SecretBox } from '../webhooks/index.js';
import { loadCookieKey } from './keys.js';

// The session cookies' HMAC key over a real store (SQLite): sealed when made, the same for every
// node, and the key kept in clear before migration 023 sealed and its clear row deleted.
describe('session cookie key', () => {
  const box = new SecretBox(randomBytes(32));
  const dirs: string[] = [];
  after(async () => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));
  async function freshStore(): Promise<{ store: Store; file: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'svc-cookie-key-'));
    dirs.push(dir);
    const store = await openStore({ dataDir: dir });
    return { store, file: join(dir, SQLITE_FILE) };
  }
  /** Every value in the two key tables, as the database file holds them. */
  function storedValues(file: string): string[] {
    const db = new Database(file, { readonly: true });
    try {
      const clear = db.prepare('select secret from oidc_keys').all() as Array<{ secret: string }>;
      const sealed = db.prepare('select sealed_secret from oidc_sealed_keys').all() as Array<{ sealed_secret: string }>;
      return [...clear.map((row) => row.secret), ...sealed.map((row) => row.sealed_secret)];
    } finally {
      db.close();
    }
  }

  it('makes a key sealed at rest, and every later load (another node) gets the same one', async () => {
    const { store, file } = await freshStore();
    try {
      const first = await loadCookieKey(store.oidc, box);
      assert.equal(first.length, 32);
      assert.deepEqual(await loadCookieKey(store.oidc, box), first);
      const values = storedValues(file);
      assert.equal(values.length, 1);
      assert.ok(values[0]!.startsWith('v1.'), 'sealed');
      assert.ok(!values[0]!.includes(first.toString('base64url')), 'the key is not in the row');
    } finally {
      await store.close();
    }
  });

  it('seals the key kept in clear before 023 and deletes the clear row; cookies signed with it stay valid', async () => {
    const { store, file } = await freshStore();
    try {
      const legacy = randomBytes(32);
      await store.oidc.key('session-hmac', { keyId: 'hmac', secret: legacy.toString('base64url') });
      assert.deepEqual(await loadCookieKey(store.oidc, box), legacy);
      assert.equal(await store.oidc.clearKey('session-hmac'), undefined, 'no key left in clear');
      const values = storedValues(file);
      assert.equal(values.length, 1);
      assert.ok(values[0]!.startsWith('v1.') && !values[0]!.includes(legacy.toString('base64url')));
      assert.deepEqual(await loadCookieKey(store.oidc, box), legacy, 'a node starting later reads the sealed copy');
    } finally {
      await store.close();
    }
  });

  it('keeps the sealed key when a clear copy is still there (a node stopped between the two writes)', async () => {
    const { store } = await freshStore();
    try {
      const key = await loadCookieKey(store.oidc, box);
      await store.oidc.key('session-hmac', { keyId: 'hmac', secret: key.toString('base64url') });
      assert.deepEqual(await loadCookieKey(store.oidc, box), key);
      assert.equal(await store.oidc.clearKey('session-hmac'), undefined);
    } finally {
      await store.close();
    }
  });

  it('refuses with a clear message a key sealed under another secret key', async () => {
    const { store } = await freshStore();
    try {
      await loadCookieKey(store.oidc, box);
      await assert.rejects(
        loadCookieKey(store.oidc, new SecretBox(randomBytes(32))),
        /session cookie key cannot be opened.*SVC_WEBHOOK_KEY/,
      );
    } finally {
      await store.close();
    }
  });
});
