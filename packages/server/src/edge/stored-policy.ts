import type { TunnelPolicy } from '@svcrouter/protocol';

/** What the store holds in place of a webhook secret when the server has nothing to seal it with. */
export const UNSTORED_SECRET = '(not stored)';

/**
 * A bind's policy as the store keeps it (JSON): passwords are already hashes; a webhook signing
 * secret must be read back in clear to check signatures, so it is sealed (secret-box) or, with no
 * sealing key, not kept at all. The edge checks with the secret of the bind in memory; the store's
 * copy serves the API's summary, which never shows it.
 */
export function storedPolicy(policy: TunnelPolicy, seal: ((plain: string) => string) | undefined): string {
  if (policy.verifyWebhook === undefined) return JSON.stringify(policy);
  const secret = seal === undefined ? UNSTORED_SECRET : seal(policy.verifyWebhook.secret);
  return JSON.stringify({ ...policy, verifyWebhook: { ...policy.verifyWebhook, secret } });
}
