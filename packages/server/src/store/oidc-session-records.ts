/** A single sign-on session signed out before its time. */
export interface OidcRevocation {
  sessionId: string;
  revokedAt: number;
  /** When the session would have expired: the row is useless after it. */
  expiresAt: number;
}

/** An ES256 signing key of X-Svc-Identity as stored: the private key sealed, the public one in clear. */
export interface OidcSigningKey {
  kid: string;
  /** The private JWK, sealed with the node's secret key (oidc/signing-keys.ts). */
  sealedKey: string;
  /** The public JWK (JSON), what the JWKS publishes. */
  publicJwk: string;
  createdAt: number;
  /** From when nodes sign with it; published from `createdAt`. */
  activeAt: number;
}

/** Revoked sessions and the signing key schedule (oidc_revocations, oidc_signing_keys). */
export interface OidcSessionsRepo {
  /** Records a signed-out session (again: a no-op). */
  revokeSession(revocation: OidcRevocation): Promise<void>;
  /** Sessions revoked at or after `sinceMs` that are not expired at `atMs` (since 0: all). */
  revokedSince(sinceMs: number, atMs: number): Promise<OidcRevocation[]>;
  /** Deletes revocations of sessions expired at `atMs`; returns how many. */
  deleteExpiredRevocations(atMs: number): Promise<number>;
  /** Every stored signing key, oldest first. */
  signingKeys(): Promise<OidcSigningKey[]>;
  /** Stores a signing key (a kid already stored: kept as it was). */
  addSigningKey(key: OidcSigningKey): Promise<void>;
  /** Deletes a signing key that is no longer published. */
  deleteSigningKey(kid: string): Promise<void>;
  /** The ES256 key stored in clear by 013 (`oidc_keys`), to adopt into the schedule; then `forgetLegacyKey`. */
  legacyKey(): Promise<{ kid: string; privateJwk: string; createdAt: number } | undefined>;
  forgetLegacyKey(): Promise<void>;
}
