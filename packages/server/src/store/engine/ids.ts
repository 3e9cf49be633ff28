import { randomBytes } from 'node:crypto';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
// 10 random bytes = 80 bits = exactly 16 base32 characters.
const ID_BYTES = 10;

/** A new random id such as `acc_k3v9q2m7x4b8n5tz`: prefix, underscore, 16 lower-case base32 chars. */
export function newId(prefix: string): string {
  const bytes = randomBytes(ID_BYTES);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    // At most 4 leftover bits + 8 new ones are pending, so 12 bits suffice.
    value = ((value << 8) | byte) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `${prefix}_${out}`;
}
