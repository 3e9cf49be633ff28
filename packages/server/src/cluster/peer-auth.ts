import { createHmac, randomBytes } from 'node:crypto';
import { sameText } from '@svcrouter/protocol';

// Node-to-node links are authenticated with the shared SVC_CLUSTER_SECRET, which never travels:
// the dialer sends an HMAC over who it is, whom it dials, the time and a fresh nonce; the
// acceptor answers the 101 with an HMAC over that nonce, so each side knows the other holds
// the secret. A captured handshake cannot be replayed to another node (the target is signed),
// later than the allowed skew, or twice to the same node (nonces are remembered that long).

/** Path of the internal listener that peer links upgrade on. */
export const PEER_PATH = '/_svc/peer';
/** The `Upgrade` token of a peer link. */
export const PEER_UPGRADE = 'svc-peer/1';
/** The dialing node's id. */
export const PEER_NODE_HEADER = 'x-svc-node-id';
/** `v1.<ms>.<nonce>.<hmac>` from the dialer. */
export const PEER_AUTH_HEADER = 'x-svc-cluster-auth';
/** The acceptor's answer in the 101. */
export const PEER_PROOF_HEADER = 'x-svc-cluster-proof';
/** How far a dialer's clock may be from the acceptor's. */
export const MAX_CLOCK_SKEW_MS = 60_000;

const hmac = (secret: string, text: string): string => createHmac('sha256', secret).update(text).digest('base64url');

/** The dialer's credentials for a link from `from` to `to`, and the nonce its proof check needs. */
export function dialCredentials(secret: string, from: string, to: string, now = Date.now()): { header: string; nonce: string } {
  const nonce = randomBytes(16).toString('base64url');
  return { header: `v1.${now}.${nonce}.${hmac(secret, `dial\n${from}\n${to}\n${now}\n${nonce}`)}`, nonce };
}

/** The acceptor's answer to a dial carrying `nonce`. */
export function acceptProof(secret: string, self: string, nonce: string): string {
  return hmac(secret, `accept\n${self}\n${nonce}`);
}

/** Whether the acceptor's answer shows it holds the secret. */
export function isValidProof(secret: string, to: string, nonce: string, proof: string | undefined): boolean {
  return typeof proof === 'string' && sameText(proof, acceptProof(secret, to, nonce));
}

export type DialCheck = { ok: true; from: string; nonce: string } | { ok: false; reason: string };

/** Remembers the nonces seen within the skew window, so a captured handshake is refused the second time. */
export class NonceMemory {
  private readonly seen = new Map<string, number>();

  /** False when the nonce was already used. */
  remember(nonce: string, now: number): boolean {
    for (const [key, at] of this.seen) {
      if (at > now - 2 * MAX_CLOCK_SKEW_MS) break;
      this.seen.delete(key);
    }
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, now);
    return true;
  }
}

/** Checks a dial's headers on the node `self`. */
export function checkDial(
  secret: string,
  self: string,
  from: string | undefined,
  header: string | undefined,
  nonces: NonceMemory,
  now = Date.now(),
): DialCheck {
  if (typeof from !== 'string' || !/^[A-Za-z0-9._-]{1,100}$/.test(from)) return { ok: false, reason: 'no node id' };
  const parts = typeof header === 'string' ? header.split('.') : [];
  if (parts.length !== 4 || parts[0] !== 'v1') return { ok: false, reason: 'no credentials' };
  const [, at, nonce, mac] = parts as [string, string, string, string];
  const time = Number(at);
  if (!/^\d{1,16}$/.test(at) || Math.abs(now - time) > MAX_CLOCK_SKEW_MS) return { ok: false, reason: 'clock skew or stale credentials' };
  if (!sameText(mac, hmac(secret, `dial\n${from}\n${self}\n${at}\n${nonce}`))) return { ok: false, reason: 'wrong cluster secret' };
  if (!nonces.remember(nonce, now)) return { ok: false, reason: 'replayed credentials' };
  return { ok: true, from, nonce };
}
