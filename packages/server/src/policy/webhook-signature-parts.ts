import { createHmac, type BinaryLike } from 'node:crypto';

// Pieces every provider's check shares. Each check is bounded: headers longer than
// MAX_SIGNATURE_HEADER_LENGTH and signature lists past MAX_SIGNATURES are not read further,
// so a hostile request costs at most a few HMACs over a body the caller already bounded.

/** Why a request's signature was refused, as the edge's 403 page names it. */
export type WebhookFailure = 'missing signature' | 'signature mismatch' | 'timestamp outside tolerance';

/** What a check needs of a request: the public URL as the sender saw it, its headers (lower-case names, as Node gives them) and its whole body. */
export interface SignedRequest {
  url: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** How far a signed timestamp may be from the edge's clock, either way: 5 minutes, as Stripe, Slack and Standard Webhooks document. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;
/** A signature header longer than this is not parsed (real ones are under 300 characters). */
export const MAX_SIGNATURE_HEADER_LENGTH = 4096;
/** At most this many signatures of one header are compared (several are sent while a secret is rotated). */
export const MAX_SIGNATURES = 8;

/**
 * One header's value: undefined when absent or empty, the value when sent once. A header sent
 * several times that reaches us as an array is joined the way Node joins repeated headers, so
 * it fails to parse as a signature rather than being half-read.
 */
export function headerValue(request: SignedRequest, lowerCaseName: string): string | undefined {
  const value = request.headers[lowerCaseName];
  const text = Array.isArray(value) ? value.join(', ') : value;
  return text === undefined || text === '' ? undefined : text;
}

/** HMAC of the concatenated parts, in the given encoding. */
export function hmac(
  algorithm: 'sha1' | 'sha256',
  key: BinaryLike,
  parts: readonly (string | Buffer)[],
  encoding: 'hex' | 'base64',
): string {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest(encoding);
}

/** Whether a signed Unix-seconds timestamp (digits only) lies within the tolerance of now, either way. */
export function timestampWithinTolerance(timestamp: string, nowMs: number): boolean {
  if (!/^\d{1,15}$/.test(timestamp)) return false;
  return Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) <= TIMESTAMP_TOLERANCE_SECONDS;
}
