import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// Signing secrets must be read back to sign, so unlike tokens they cannot be stored as hashes.
// They are sealed with AES-256-GCM under a key that is not in the database: a copy of the
// database (a backup, a read replica, an SQL injection elsewhere) does not reveal them.

/** File in the data dir holding the key on a node that has no other source for it. */
export const WEBHOOK_KEY_FILE = 'webhook.key';
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Seals and opens webhook signing secrets with one 256-bit key. */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the webhook key must be 32 bytes');
  }

  /** `v1.` + base64(iv | tag | ciphertext). */
  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** The secret in clear; throws when it was sealed under another key or altered. */
  open(sealed: string): string {
    if (!sealed.startsWith(`${VERSION}.`)) throw new Error('unknown sealed secret format');
    const raw = Buffer.from(sealed.slice(VERSION.length + 1), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

/** A 256-bit key derived from an operator secret (SVC_WEBHOOK_KEY, or SVC_CLUSTER_SECRET shared by every node). */
export function deriveWebhookKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'svcrouter webhook secrets', 'v1', 32));
}

/**
 * The key of a node with neither variable: 32 random bytes in `<dataDir>/webhook.key` (mode
 * 0600), made on first start. Two processes starting together agree: the loser of the
 * exclusive create reads the winner's file.
 */
export async function loadOrCreateKeyFile(dataDir: string): Promise<Buffer> {
  const file = join(dataDir, WEBHOOK_KEY_FILE);
  await mkdir(dataDir, { recursive: true });
  try {
    await writeFile(file, randomBytes(32).toString('base64') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} does not hold a base64 32-byte key`);
  return key;
}
