// When each signing key of X-Svc-Identity is published, signed with and dropped. Pure: the key
// ring of every node and `svc-server oidc keys` compute the same answer from the stored rows.
//
// A key is published from the moment it is stored, signed with from its `activeAt` (a rotation
// puts that KEY_ACTIVATION_DELAY_MS after its creation, so every node and every verifier's JWKS
// cache has it first), and the key it replaces stays published RETAIN_AFTER_SUCCESSOR_MS after
// the successor became active: longer than a token signed just before the switch lives.

import { IDENTITY_TTL_MS } from './identity-tokens.js';

/** Default wait between a rotation and the first token signed with the new key. */
export const KEY_ACTIVATION_DELAY_MS = 60_000;
/** Extra time a replaced key stays published past the last token it signed: clock skew, caches. */
export const RETIRE_SLACK_MS = 5 * 60_000;
/** How long a key stays published after its successor became active. */
export const RETAIN_AFTER_SUCCESSOR_MS = IDENTITY_TTL_MS + RETIRE_SLACK_MS;

/** What the schedule needs of a key. */
export interface ScheduledKey {
  kid: string;
  createdAt: number;
  activeAt: number;
}

/** Where a key is in its life at one moment. */
export type KeyState = 'pending' | 'signing' | 'retiring' | 'retired';

export interface KeyPlan<K extends ScheduledKey> {
  key: K;
  state: KeyState;
  /** When it stops being published (its successor's activeAt + retention); undefined while it has no active successor. */
  dropAt: number | undefined;
}

/**
 * The plan of every key at `now`, in activation order (activeAt, then kid: nodes agree on a tie).
 * The signing key is the last one active; with none active yet, the first (a rotation ran before
 * any node stored its first key: signing with it beats not signing).
 */
export function planKeys<K extends ScheduledKey>(keys: readonly K[], now: number): Array<KeyPlan<K>> {
  const ordered = [...keys].sort((a, b) => a.activeAt - b.activeAt || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0));
  let signing = -1;
  for (let i = 0; i < ordered.length; i++) if (ordered[i]!.activeAt <= now) signing = i;
  if (signing < 0 && ordered.length > 0) signing = 0;
  return ordered.map((key, i) => {
    if (i === signing) return { key, state: 'signing', dropAt: undefined };
    if (i > signing) return { key, state: 'pending', dropAt: undefined };
    const dropAt = ordered[i + 1]!.activeAt + RETAIN_AFTER_SUCCESSOR_MS;
    return { key, state: dropAt > now ? 'retiring' : 'retired', dropAt };
  });
}

/** The key to sign with at `now`, or undefined when there is none. */
export function signingKey<K extends ScheduledKey>(keys: readonly K[], now: number): K | undefined {
  return planKeys(keys, now).find((plan) => plan.state === 'signing')?.key;
}

/** The keys the JWKS publishes at `now`: every key but the retired. */
export function publishedKeys<K extends ScheduledKey>(keys: readonly K[], now: number): K[] {
  return planKeys(keys, now)
    .filter((plan) => plan.state !== 'retired')
    .map((plan) => plan.key);
}

/** Whether a key is active at `now` (signing would use one of these, not a fallback). */
export function hasActiveKey(keys: readonly ScheduledKey[], now: number): boolean {
  return keys.some((key) => key.activeAt <= now);
}

/** How long a JWKS may be cached so that a key stored now reaches every verifier before it signs. */
export function jwksMaxAgeSeconds(activationDelayMs: number): number {
  return Math.max(0, Math.min(30, Math.floor(activationDelayMs / 2_000)));
}

/** How often a node re-reads the stored keys: well within the activation delay. */
export function keyRefreshMs(activationDelayMs: number): number {
  return Math.max(250, Math.min(10_000, Math.floor(activationDelayMs / 4)));
}
