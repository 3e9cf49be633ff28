import { createHmac } from 'node:crypto';
import { sameText } from '@svcrouter/protocol';
import type { WebhookEventType } from './api-types.js';

// Receivers check a delivery with verifyWebhook(): the Standard Webhooks scheme
// (standardwebhooks.com), so the `standardwebhooks` package verifies the same deliveries.

/** How far a delivery's webhook-timestamp may be from the receiver's clock: replays older than this are refused. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** A delivery's JSON body: `data` is the object as the REST API shows it. */
export interface WebhookEvent<Data = Record<string, unknown>> {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  data: Data;
}

/** Why a delivery was refused: a header missing, a stale timestamp or a signature that does not match. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** Headers as Node (IncomingHttpHeaders), fetch (Headers) or a plain object gives them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Verifies a delivery's signature and age and returns its event. `body` must be the raw body as
 * received (a re-serialised object would not match). Throws WebhookVerificationError.
 */
export function verifyWebhook<Data = Record<string, unknown>>(
  secret: string,
  body: string | Buffer,
  headers: WebhookHeaders,
  options: { toleranceSeconds?: number; now?: number } = {},
): WebhookEvent<Data> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  const seconds = Number(timestamp);
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - seconds) > (options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError('webhook-timestamp is too far from now');
  }
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  // The MAC covers the body's bytes as they came: a Buffer is not decoded first, where bytes
  // that are not UTF-8 would all become U+FFFD and several bodies would share one signature.
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  // Several space-separated signatures may be sent while a secret is rotated; one match is enough.
  // Each is compared as text, as the edge's own checks do: decoding base64 first would take
  // other spellings of the one right MAC (a last character's spare bits).
  const matches = signatures.split(' ').some((entry) => entry.startsWith('v1,') && sameText(entry.slice('v1,'.length), expected));
  if (!matches) throw new WebhookVerificationError('webhook-signature does not match');
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as WebhookEvent<Data>;
  } catch {
    throw new WebhookVerificationError('the body is signed but is not JSON');
  }
}
