import type { Binding } from './router.js';

/** A live binding as the fleet reports it: which tunnel serves which public name. */
export type LiveBinding = Pick<Binding, 'tunnelId' | 'hostname' | 'url'>;

/**
 * The tunnels this server answers for through its API: this node's edge when it runs alone,
 * every node's when it belongs to a cluster. `Edge` and `Cluster` both implement it, and the
 * composition root picks one at start, so no caller asks which kind it holds.
 */
export interface Fleet {
  /** Closes a tunnel with a sentence for its agent, wherever it is held; true when it was live. */
  releaseTunnel(tunnelId: string, reason: string): boolean;
  /** Whether a tunnel is live. */
  isLive(tunnelId: string): boolean;
  /** How many tunnels of an account are live; one held on two nodes counts once. */
  liveTunnels(accountId: string): number;
  /** An account's live bindings, each hostname once. */
  liveBindings(accountId: string): Iterable<LiveBinding>;
  /** Ends the agent sessions signed in with a revoked key; returns how many this node ended. */
  dropSessionsOfKey(keyId: string, message: string): number;
  /** Tells the other nodes (there are none when alone) to drop a removed domain's certificates from memory. */
  forgetCertificates(domainHost: string): void;
}
