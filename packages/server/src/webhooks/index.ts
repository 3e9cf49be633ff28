/**
 * Signed webhooks: the events an account can subscribe to, Standard Webhooks signing, the
 * sealed signing secrets, the private-address guard and the sender. May use: hostname, store.
 * The dispatcher drains the store's outbox; the composition root (webhooks-wiring.ts) hands it
 * the sources of events.
 */
export { WEBHOOK_EVENT_TYPES, subscribes, type WebhookEnvelope, type WebhookEventType } from './events.js';
export { newSigningSecret, sign, signatureHeaders, SECRET_PREFIX } from './signing.js';
export { SecretBox, deriveWebhookKey, loadOrCreateKeyFile, WEBHOOK_KEY_FILE } from './secret-box.js';
export { isPrivateAddress, privateAddressProblem, urlHost, guardedLookup, type AddressProblem } from './address-guard.js';
export { send, DELIVERY_TIMEOUT_MS, type SendResult } from './sender.js';
export { WebhookDispatcher, retryDelay, DEFAULT_RETRY_SCHEDULE_MS, RETRY_FOR_MS, type DispatcherOptions } from './dispatcher.js';
export { WebhookEvents, usageThresholdWatcher, USAGE_THRESHOLDS } from './webhook-events.js';
