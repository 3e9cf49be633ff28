import type { OidcSessionsRepo } from './oidc-session-records.js';

/** A key every node signs with, as stored: one per purpose, written once. */
export interface OidcKey {
  purpose: string;
  keyId: string;
  /** The key material (a private JWK, or random bytes in base64url). */
  secret: string;
  createdAt: number;
}

/** A key every node uses, sealed under the nodes' secret key (which is not in the store). */
export interface OidcSealedKey {
  purpose: string;
  keyId: string;
  /** The key material as the sealer sealed it (`v1.…`). */
  sealedSecret: string;
  createdAt: number;
}

/** The sealed keys of single sign-on (oidc_sealed_keys), and the clear rows of oidc_keys they replace. */
export interface OidcSealedKeysRepo {
  /** The sealed key of `purpose`: the stored one, else `candidate` once stored (the first insert wins). */
  sealedKey(purpose: string, candidate: Pick<OidcSealedKey, 'keyId' | 'sealedSecret'>): Promise<OidcSealedKey>;
  /** The key of `purpose` kept in clear in oidc_keys (before migration 023), if any. */
  clearKey(purpose: string): Promise<OidcKey | undefined>;
  /** Deletes the clear key of `purpose` (once its sealed copy is stored). */
  forgetClearKey(purpose: string): Promise<void>;
}

/** The shared keys and one-time tickets of single sign-on (oidc_keys, oidc_tickets), revocations and signing keys. */
export interface OidcRepo extends OidcSessionsRepo, OidcSealedKeysRepo {
  /**
   * The key of `purpose`: the stored one, else `candidate` once stored. Nodes starting together
   * all end up with the same key (the first insert wins; the others read it).
   */
  key(purpose: string, candidate: Omit<OidcKey, 'purpose' | 'createdAt'>): Promise<OidcKey>;
  /** Stores a ticket (`id` is the hash of its random value) until `expiresAt` (ms). */
  putTicket(id: string, kind: string, payload: string, expiresAt: number): Promise<void>;
  /** Takes a ticket of `kind`: its payload, deleted in the same statement, or undefined (unknown, used or expired). */
  takeTicket(id: string, kind: string, atMs: number): Promise<string | undefined>;
  /** Deletes tickets expired at `atMs`; returns how many. */
  deleteExpiredTickets(atMs: number): Promise<number>;
}
