import { hkdfSync } from 'node:crypto';
import type { ServerConfig } from './config.js';
import { deriveWebhookKey, loadOrCreateKeyFile, SecretBox } from './webhooks/index.js';

/**
 * The box that seals the private signing keys of X-Svc-Identity in the store. Its key comes from
 * the same source as the webhook secrets' (SVC_WEBHOOK_KEY, else SVC_CLUSTER_SECRET, else
 * `<data dir>/webhook.key`), so every node of a cluster and `svc-server oidc` agree, and is
 * derived apart from it: one sealed value can never be opened as the other.
 */
export async function loadOidcSealer(config: ServerConfig): Promise<SecretBox> {
  const source = config.webhookKey ?? config.cluster?.secret;
  const root = source !== undefined ? deriveWebhookKey(source) : await loadOrCreateKeyFile(config.dataDir);
  return new SecretBox(Buffer.from(hkdfSync('sha256', root, 'svcrouter oidc signing keys', 'v1', 32)));
}
