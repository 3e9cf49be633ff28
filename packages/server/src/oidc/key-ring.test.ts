import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type JsonWebKey } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { openStore, type Store } from '../store/index.js';
import { SecretBox } from '../webhooks/index.js';
import { KeyRing } from './key-ring.js';
import { RETAIN_AFTER_SUCCESSOR_MS } from './key-schedule.js';
import { newSigningKey } from './signing-keys.js';

// A node's key ring over a real store (SQLite) and a hand-moved clock: the first key, the key
// migration 013 kept in clear, a rotation and the deletion of a retired key.
describe('signing key ring', () => {
  const log = pino({ level: 'silent' });
  const box = new SecretBox(randomBytes(32));
  const T = 1_800_000_000_000;
  const dirs: string[] = [];
  after(async () => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));
  async function freshStore(): Promise<Store> {
    const dir = await mkdtemp(join(tmpdir(), 'svc-key-ring-'));
    dirs.push(dir);
    return openStore({ dataDir: dir });
  }

  it('stores a first key active at once, and signs with it', async () => {
    const store = await freshStore();
    const ring = new KeyRing({ repo: store.oidc, sealer: box, activationDelayMs: 60_000, log, now: () => T });
    try {
      await ring.start();
      const key = ring.signingKey(T);
      const { keys } = JSON.parse(ring.jwks(T)) as { keys: Array<JsonWebKey & { kid: string }> };
      const signature = sign('sha256', Buffer.from('payload'), key.privateKey);
      const published = createPublicKey({ key: keys[0]!, format: 'jwk' });
      assert.equal(verify('sha256', Buffer.from('payload'), published, signature), true, 'the JWKS verifies what the key signs');
      assert.deepEqual(
        keys.map((k) => [k.kid, k.d]),
        [[key.kid, undefined]],
      );
      assert.equal((await store.oidc.signingKeys()).length, 1);
    } finally {
      ring.close();
      await store.close();
    }
  });

  it('adopts the key stored in clear before, sealing it and deleting the clear copy, so tokens keep their kid', async () => {
    const store = await freshStore();
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await store.oidc.key('identity-es256', { keyId: 'legacy-kid', secret: JSON.stringify(pair.privateKey.export({ format: 'jwk' })) });
    const ring = new KeyRing({ repo: store.oidc, sealer: box, activationDelayMs: 60_000, log, now: () => T });
    try {
      await ring.start();
      assert.equal(ring.signingKey(T).kid, 'legacy-kid');
      assert.equal(await store.oidc.legacyKey(), undefined, 'no private key left in clear');
      const [stored] = await store.oidc.signingKeys();
      assert.equal(stored?.kid, 'legacy-kid');
      assert.ok(stored.sealedKey.startsWith('v1.'));
    } finally {
      ring.close();
      await store.close();
    }
  });

  it('publishes a rotated key before it signs, switches at its activeAt, and deletes the old key once retired', async () => {
    const store = await freshStore();
    let now = T;
    const ring = new KeyRing({ repo: store.oidc, sealer: box, activationDelayMs: 60_000, log, now: () => now });
    try {
      await ring.start();
      const old = ring.signingKey(now).kid;
      now += 1_000;
      const rotated = newSigningKey(box, now, now + 60_000);
      await store.oidc.addSigningKey(rotated);
      await ring.refresh();
      const kids = () => (JSON.parse(ring.jwks(now)) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid).sort();
      assert.deepEqual(kids(), [old, rotated.kid].sort());
      assert.equal(ring.signingKey(now + 59_999).kid, old);
      assert.equal(ring.signingKey(now + 60_000).kid, rotated.kid);
      now = rotated.activeAt + RETAIN_AFTER_SUCCESSOR_MS - 1;
      await ring.refresh();
      assert.deepEqual(kids(), [old, rotated.kid].sort());
      now += 1;
      assert.deepEqual(kids(), [rotated.kid], 'no longer published once retired');
      await ring.refresh();
      assert.deepEqual(
        (await store.oidc.signingKeys()).map((k) => k.kid),
        [rotated.kid],
        'and deleted from the store',
      );
    } finally {
      ring.close();
      await store.close();
    }
  });
});
