import { sameText } from '@svcrouter/protocol';
import { hmac, MAX_SIGNATURE_HEADER_LENGTH, headerValue, type SignedRequest, type WebhookFailure } from './webhook-signature-parts.js';

// Providers that sign the body alone, with no timestamp: GitHub and Shopify. The secret is the
// HMAC key as the provider shows it (its UTF-8 bytes).

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`. */
export function verifyGithub(secret: string, request: SignedRequest): WebhookFailure | undefined {
  const header = headerValue(request, 'x-hub-signature-256');
  if (header === undefined) return 'missing signature';
  if (header.length > MAX_SIGNATURE_HEADER_LENGTH || !header.startsWith('sha256=')) return 'signature mismatch';
  const expected = hmac('sha256', secret, [request.body], 'hex');
  return sameText(header.slice('sha256='.length), expected) ? undefined : 'signature mismatch';
}

/** Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>`, keyed by the app's client secret. */
export function verifyShopify(secret: string, request: SignedRequest): WebhookFailure | undefined {
  const header = headerValue(request, 'x-shopify-hmac-sha256');
  if (header === undefined) return 'missing signature';
  if (header.length > MAX_SIGNATURE_HEADER_LENGTH) return 'signature mismatch';
  return sameText(header, hmac('sha256', secret, [request.body], 'base64')) ? undefined : 'signature mismatch';
}
