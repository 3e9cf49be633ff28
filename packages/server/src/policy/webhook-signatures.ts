import type { WebhookProvider } from '@svcrouter/protocol';
import type { SignedRequest, WebhookFailure } from './webhook-signature-parts.js';
import { verifyGithub, verifyShopify } from './webhook-signed-body.js';
import { standardWebhooksKey, verifySlack, verifyStandard, verifyStripe } from './webhook-signed-timestamp.js';
import { verifyTwilio } from './webhook-twilio.js';

// The edge's check of a webhook's signature before the request reaches the agent, one provider
// per tunnel, each exactly as the provider documents it. Expected outcomes are values:
// - 'missing signature': a header the provider always sends is absent or empty;
// - 'signature mismatch': the headers are there but do not verify, including any header that
//   cannot be parsed (wrong prefix, no signature of the expected version, too long);
// - 'timestamp outside tolerance': the signature verifies but its signed timestamp is more than
//   5 minutes from now, either way.
// Nothing here throws on what a visitor sends. The caller bounds the body.

/** The providers whose signatures the edge checks (WEBHOOK_PROVIDERS of the protocol). */
export type { WebhookProvider } from '@svcrouter/protocol';

export type { SignedRequest, WebhookFailure } from './webhook-signature-parts.js';

/** Checks one request's signature with the tunnel's secret; undefined when it verifies. */
export function verifyWebhookSignature(
  provider: WebhookProvider,
  secret: string,
  request: SignedRequest,
  nowMs: number,
): undefined | WebhookFailure {
  switch (provider) {
    case 'github':
      return verifyGithub(secret, request);
    case 'shopify':
      return verifyShopify(secret, request);
    case 'slack':
      return verifySlack(secret, request, nowMs);
    case 'stripe':
      return verifyStripe(secret, request, nowMs);
    case 'standard':
      return verifyStandard(secret, request, nowMs);
    case 'twilio':
      return verifyTwilio(secret, request);
  }
}

/** What is wrong with a secret for a provider, for the flag's or the config file's message; undefined when usable. */
export function webhookSecretProblem(provider: WebhookProvider, secret: string): string | undefined {
  if (secret === '') return 'the secret is empty';
  if (provider !== 'standard') return undefined;
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || standardWebhooksKey(secret).length === 0) {
    return 'a Standard Webhooks secret is whsec_ followed by base64';
  }
  return undefined;
}
