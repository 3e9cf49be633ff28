import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** Shortest password accepted anywhere (sign-up, link, change, CLI). */
export const MIN_PASSWORD_LENGTH = 8;
/** Longest: bounds the work one request can ask of the key derivation. */
export const MAX_PASSWORD_LENGTH = 1024;

/** Cost of new hashes: OWASP's scrypt setting of N=2^15, r=8, p=3 (32 MiB, a few hundred ms). */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}
const DEFAULT_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 3 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;
// scrypt needs 128·N·r bytes; Node's default ceiling is exactly 32 MiB, too tight for N=2^15, r=8.
const MAX_MEMORY = 64 * 1024 * 1024;
const SCHEME = 'scrypt';
// scrypt$N$r$p$salt$key: the parameters travel with the hash, so the cost can rise later
// without breaking stored hashes.
const ENCODED_RE = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

function derive(password: string, salt: Buffer, keyLength: number, cost: ScryptCost): Promise<Buffer> {
  const options: ScryptOptions = { N: cost.N, r: cost.r, p: cost.p, maxmem: MAX_MEMORY };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** A salted scrypt hash of the password, encoded with its parameters (`scrypt$N$r$p$salt$key`). */
export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_COST): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, KEY_BYTES, cost);
  return [SCHEME, cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** True when the password matches the encoded hash; false for a wrong password or a malformed hash. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const m = ENCODED_RE.exec(encoded);
  if (!m) return false;
  const cost = { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  const salt = Buffer.from(m[4]!, 'base64url');
  const expected = Buffer.from(m[5]!, 'base64url');
  if (expected.length === 0) return false;
  const actual = await derive(password, salt, expected.length, cost);
  return timingSafeEqual(actual, expected);
}

/**
 * Spends the time of one verification without a stored hash, so a sign-in for an unknown
 * email answers as slowly as one for a known email with a wrong password.
 */
export async function burnVerification(password: string): Promise<void> {
  dummyHash ??= hashPassword('no account has this password');
  await verifyPassword(password, await dummyHash);
}
// Made on first use: processes that never sign anyone in (the CLI) do not pay for it.
let dummyHash: Promise<string> | undefined;

/** The rule every password must meet, as the sentence shown to people; undefined when it does. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `password must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `password must be at most ${MAX_PASSWORD_LENGTH} characters`;
  return undefined;
}
