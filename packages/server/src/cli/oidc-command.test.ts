import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { loadConfig, type ServerConfig } from '../config.js';
import { openStore } from '../store/index.js';
import { SecretBox } from '../webhooks/index.js';
import { runOidcCommand } from './oidc-command.js';

// `svc-server oidc rotate-key` and `oidc keys` against a real store (SQLite), with a fixed clock
// so the schedule's times are exact, and real sealing boxes.
describe('svc-server oidc', () => {
  const NOW = 1_800_000_000_000;
  const box = new SecretBox(randomBytes(32));
  let dir: string;
  let config: ServerConfig;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-oidc-cli-'));
    config = loadConfig({ SVC_DATA_DIR: dir, SVC_OIDC_KEY_ACTIVATION_SECONDS: '90' });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(args: string[], sealer = box, now = NOW): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const out = new PassThrough().on('data', (d: Buffer) => (stdout += d.toString()));
    const err = new PassThrough().on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await runOidcCommand(args, config, { stdout: out, stderr: err }, { loadSealer: async () => sealer, now: () => now });
    return { code, stdout, stderr };
  }

  it('says when there is no key yet', async () => {
    const { code, stdout } = await run(['keys']);
    assert.equal(code, 0);
    assert.equal(stdout, 'No signing key yet: the first svc-server start with SVC_OIDC_PROVIDERS stores one.\n');
  });

  it('stores a sealed key that signs after the configured delay, and lists the schedule', async () => {
    const first = await run(['rotate-key']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^New signing key \S+: published now, signs from 2027-01-15T08:01:30Z \(in 90 s\)\.\n$/);
    const second = await run(['rotate-key'], box, NOW + 3_600_000);
    assert.match(second.stdout, /The key it replaces, \S+, stays published until 2027-01-15T09:11:30Z\./);
    const store = await openStore({ dataDir: dir });
    try {
      const keys = await store.oidc.signingKeys();
      assert.equal(keys.length, 2);
      for (const key of keys) {
        assert.ok(key.sealedKey.startsWith('v1.'), 'the private key is sealed');
        assert.doesNotMatch(key.sealedKey, /"d"/);
        assert.equal((JSON.parse(box.open(key.sealedKey)) as { kty: string }).kty, 'EC');
      }
    } finally {
      await store.close();
    }
    const table = await run(['keys'], box, NOW + 3_600_000 + 90_000);
    assert.equal(table.code, 0);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^KID\s+STATE\s+CREATED\s+SIGNS FROM\s+DROPPED AT$/);
    assert.match(lines[1]!, /\sretiring\s+2027-01-15T08:00:00Z\s+2027-01-15T08:01:30Z\s+2027-01-15T09:11:30Z$/);
    assert.match(lines[2]!, /\ssigning\s+2027-01-15T09:00:00Z\s+2027-01-15T09:01:30Z\s+-$/);
    const json = JSON.parse((await run(['keys', '--json'], box, NOW + 3_600_000 + 90_000)).stdout) as {
      keys: Array<{ state: string; dropAt: number | null }>;
    };
    assert.deepEqual(
      json.keys.map((k) => [k.state, k.dropAt]),
      [
        ['retiring', NOW + 3_600_000 + 90_000 + 600_000],
        ['signing', null],
      ],
    );
  });

  it('refuses to rotate with a secret key other than the one the stored keys were sealed with', async () => {
    const result = await run(['rotate-key'], new SecretBox(randomBytes(32)));
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^svc-server oidc: signing key \S+ cannot be opened: it was sealed with another secret key/);
  });

  it('answers a bad command line with its usage and exit code 2', async () => {
    for (const args of [[], ['rotate'], ['keys', '--all'], ['rotate-key', '--json']]) {
      const result = await run(args);
      assert.equal(result.code, 2);
      assert.equal(result.stderr, 'usage: svc-server oidc rotate-key | svc-server oidc keys [--json]\n');
    }
  });
});
