import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks (standardwebhooks.com): the secret is `whsec_` + base64 of random bytes; a
// delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`
// (`v1,` + base64 HMAC-SHA256 of "<id>.<timestamp>.<body>" keyed by the decoded secret).

/** Prefix of every signing secret. */
export const SECRET_PREFIX = 'whsec_';
/** Bytes of key behind a secret: 256 bits, the HMAC-SHA256 block-size sweet spot. */
const SECRET_BYTES = 32;

/** A fresh signing secret, `whsec_` + base64. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The `v1,<base64>` signature of one message. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three Standard Webhooks headers of a delivery signed now. */
export function signatureHeaders(secret: string, id: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(secret, id, timestamp, body) };
}
