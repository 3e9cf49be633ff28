import { sameText } from '@svcrouter/protocol';
import {
  MAX_SIGNATURES,
  MAX_SIGNATURE_HEADER_LENGTH,
  headerValue,
  hmac,
  timestampWithinTolerance,
  type SignedRequest,
  type WebhookFailure,
} from './webhook-signature-parts.js';

// Providers that sign a timestamp with the body, so a captured request cannot be replayed after
// 5 minutes: Slack, Stripe and Standard Webhooks. The signature is checked before the timestamp,
// so 'timestamp outside tolerance' is only ever said of a request the secret's holder signed (a
// replay or a skewed clock), never of a forgery.

/** The verdict once the signature matched or not. */
function afterSignature(matched: boolean, timestamp: string, nowMs: number): WebhookFailure | undefined {
  if (!matched) return 'signature mismatch';
  return timestampWithinTolerance(timestamp, nowMs) ? undefined : 'timestamp outside tolerance';
}

/** Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<body>">` with `X-Slack-Request-Timestamp`, keyed by the signing secret. */
export function verifySlack(secret: string, request: SignedRequest, nowMs: number): WebhookFailure | undefined {
  const signature = headerValue(request, 'x-slack-signature');
  const timestamp = headerValue(request, 'x-slack-request-timestamp');
  if (signature === undefined || timestamp === undefined) return 'missing signature';
  if (signature.length > MAX_SIGNATURE_HEADER_LENGTH || timestamp.length > MAX_SIGNATURE_HEADER_LENGTH || !signature.startsWith('v0=')) {
    return 'signature mismatch';
  }
  const expected = hmac('sha256', secret, [`v0:${timestamp}:`, request.body], 'hex');
  return afterSignature(sameText(signature.slice('v0='.length), expected), timestamp, nowMs);
}

/**
 * Stripe: `Stripe-Signature: t=<timestamp>,v1=<hex>,v1=<hex>,…` where each v1 is an
 * HMAC-SHA256 of "<timestamp>.<body>" keyed by the endpoint's `whsec_…` secret as text; one
 * matching v1 is enough (several are sent while a secret is rolled). Other schemes (v0) are ignored.
 */
export function verifyStripe(secret: string, request: SignedRequest, nowMs: number): WebhookFailure | undefined {
  const header = headerValue(request, 'stripe-signature');
  if (header === undefined) return 'missing signature';
  if (header.length > MAX_SIGNATURE_HEADER_LENGTH) return 'signature mismatch';
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const equals = item.indexOf('=');
    if (equals === -1) continue;
    const key = item.slice(0, equals).trim();
    const value = item.slice(equals + 1).trim();
    if (key === 't' && timestamp === undefined) timestamp = value;
    else if (key === 'v1' && signatures.length < MAX_SIGNATURES) signatures.push(value);
  }
  if (timestamp === undefined || !/^\d+$/.test(timestamp) || signatures.length === 0) return 'signature mismatch';
  const expected = hmac('sha256', secret, [`${timestamp}.`, request.body], 'hex');
  // Every candidate is compared, matched or not, so the time taken does not tell which one matched.
  let matched = false;
  for (const signature of signatures) matched = sameText(signature, expected) || matched;
  return afterSignature(matched, timestamp, nowMs);
}

/** The key behind a Standard Webhooks secret: the base64 after `whsec_` (a secret without the prefix is taken as base64 too, as the standardwebhooks package does). */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/**
 * Standard Webhooks (Svix and others): `webhook-id`, `webhook-timestamp` and `webhook-signature`,
 * a space-separated list of `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed by the
 * decoded secret; one matching v1 is enough, other versions are ignored.
 */
export function verifyStandard(secret: string, request: SignedRequest, nowMs: number): WebhookFailure | undefined {
  const id = headerValue(request, 'webhook-id');
  const timestamp = headerValue(request, 'webhook-timestamp');
  const header = headerValue(request, 'webhook-signature');
  if (id === undefined || timestamp === undefined || header === undefined) return 'missing signature';
  if (
    id.length > MAX_SIGNATURE_HEADER_LENGTH ||
    timestamp.length > MAX_SIGNATURE_HEADER_LENGTH ||
    header.length > MAX_SIGNATURE_HEADER_LENGTH
  ) {
    return 'signature mismatch';
  }
  const expected = hmac('sha256', standardWebhooksKey(secret), [`${id}.${timestamp}.`, request.body], 'base64');
  let matched = false;
  let compared = 0;
  for (const entry of header.split(' ')) {
    if (!entry.startsWith('v1,')) continue;
    if (++compared > MAX_SIGNATURES) break;
    matched = sameText(entry.slice('v1,'.length), expected) || matched;
  }
  return afterSignature(matched, timestamp, nowMs);
}
