import { timingSafeEqual } from 'node:crypto';

/**
 * Whether a received secret (a signature, a token, a proof) equals the expected one, in time
 * that does not depend on where they differ. Their lengths are compared first: what is compared
 * is a digest, a MAC or a token whose length the algorithm fixes, so that leaks nothing.
 */
export function sameText(received: string, expected: string): boolean {
  const a = Buffer.from(received, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
