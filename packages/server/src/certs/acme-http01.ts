/** Path prefix under which the CA fetches HTTP-01 answers, on the plain-HTTP port. */
export const ACME_CHALLENGE_PATH = '/.well-known/acme-challenge/';

// RFC 8555 §8.3: the token is base64url, at least 128 bits of entropy.
const TOKEN = /^[A-Za-z0-9_-]{16,256}$/;

/** The token of an HTTP-01 request path (query ignored), or undefined when the path is not one. */
export function acmeChallengeToken(path: string): string | undefined {
  if (!path.startsWith(ACME_CHALLENGE_PATH)) return undefined;
  const token = path.slice(ACME_CHALLENGE_PATH.length).split('?')[0] ?? '';
  return TOKEN.test(token) ? token : undefined;
}
