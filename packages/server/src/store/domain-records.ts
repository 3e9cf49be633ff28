// Custom domains, their certificates and the ACME account: records and repo
// contracts. Same rules as store.ts: "not found" is `undefined`; only a
// broken uniqueness rule throws, as StoreConflictError.

/** Domain verification states, as stored in domains.state. */
export const DOMAIN_STATES = ['pending', 'verified'] as const;
export type DomainState = (typeof DOMAIN_STATES)[number];

/** Certificate states of a domain, as stored in domains.cert_state. */
export const CERT_STATES = ['none', 'pending', 'issued', 'failed'] as const;
export type CertState = (typeof CERT_STATES)[number];

export interface Domain {
  id: string;
  accountId: string;
  /** Lower-case ASCII (punycode), no trailing dot. */
  host: string;
  state: DomainState;
  /** The value to publish at `_svcrouter.<host>`; fixed when the domain is added. */
  txtValue: string;
  verifiedAt: number | undefined;
  createdAt: number;
  /** Outcome of the latest certificate order for this host or a name under it. */
  certState: CertState;
  /** Why the latest order failed (or a renewal, while the old certificate still serves). */
  certError: string | undefined;
  /** Expiry of the latest certificate issued under this domain. */
  certExpiresAt: number | undefined;
}

export interface NewDomain {
  accountId: string;
  host: string;
  txtValue: string;
}

/** A certificate as stored: full chain and private key, PEM. Never hand keyPem to an API view. */
export interface StoredCertificate {
  /** The exact TLS servername the certificate names. */
  host: string;
  /** Leaf first, then intermediates. */
  certPem: string;
  keyPem: string;
  /** notAfter of the leaf, epoch ms. */
  expiresAt: number;
  issuedAt: number;
}

/** The ACME account of one directory: its key, and its URL once registered. */
export interface AcmeAccount {
  /** The directory URL, so switching CA (staging → production) gets a fresh account. */
  id: string;
  keyPem: string;
  url: string | undefined;
}

export interface DomainRepo {
  /** Adds a pending domain; StoreConflictError when this account already has the host. */
  create(input: NewDomain): Promise<Domain>;
  /** The account's domains, newest first. */
  listForAccount(accountId: string): Promise<Domain[]>;
  /** Account-scoped: another account's domain is undefined. */
  byId(accountId: string, id: string): Promise<Domain | undefined>;
  /** Every account's row for the host (pending on several accounts is allowed), verified first, then oldest. */
  byHost(host: string): Promise<Domain[]>;
  /** Deletes one of the account's domains and returns it; undefined when not found or not theirs. */
  delete(accountId: string, id: string): Promise<Domain | undefined>;
  /**
   * Marks the domain verified (idempotent: an already verified domain is returned
   * unchanged); undefined when there is no such domain; StoreConflictError when
   * another account has the host verified.
   */
  markVerified(id: string): Promise<Domain | undefined>;
  /** Records a certificate outcome on the verified domain `host`; `error` undefined clears it, `expiresAt` undefined keeps it. */
  setCertState(host: string, state: CertState, error?: string, expiresAt?: number): Promise<void>;
  /** All the account's domains, pending and verified: what the plan limit counts. */
  countForAccount(accountId: string): Promise<number>;
  /** The verified domain equal to `hostname` or its nearest parent (`a.b.example.com` → `example.com`); most specific wins. */
  verifiedHostCovering(hostname: string): Promise<Domain | undefined>;
}

export interface CertificateRepo {
  get(host: string): Promise<StoredCertificate | undefined>;
  /** Inserts or replaces the certificate of `cert.host`. */
  put(cert: StoredCertificate): Promise<void>;
  /** Certificates whose expiresAt is before `atMs`, soonest first. */
  listExpiringBefore(atMs: number, limit?: number): Promise<StoredCertificate[]>;
  /** Removes the host's certificate; false when there was none. */
  delete(host: string): Promise<boolean>;
}

export interface AcmeAccountRepo {
  get(id: string): Promise<AcmeAccount | undefined>;
  /** Stores the key unless the id already has one, and returns what is stored: concurrent first starts agree on one key. */
  putIfAbsent(account: { id: string; keyPem: string }): Promise<AcmeAccount>;
  /** Records the account URL the CA returned at registration. */
  setUrl(id: string, url: string): Promise<void>;
}

/** A pending HTTP-01 answer shared by the nodes of a cluster. */
export interface SharedChallenge {
  token: string;
  keyAuthorization: string;
  /** Epoch ms after which the answer is no longer given (an order that never ended). */
  expiresAt: number;
}

/** What nodes sharing one database need to order certificates together (acme_challenges, acme_order_leases). */
export interface AcmeSharedRepo {
  /** Stores (or replaces) the answer for a token. */
  putChallenge(challenge: SharedChallenge): Promise<void>;
  /** The key authorization for a token, unless it expired by `now`. */
  challenge(token: string, now: number): Promise<string | undefined>;
  deleteChallenge(token: string): Promise<void>;
  /** Removes answers expired by `now`; returns how many. */
  deleteExpiredChallenges(now: number): Promise<number>;
  /**
   * Takes the lease on ordering `host` until `expiresAt`: true when no lease was held, it had
   * expired by `now`, or `nodeId` already held it (its previous run died mid-order).
   */
  acquireOrder(host: string, nodeId: string, now: number, expiresAt: number): Promise<boolean>;
  /** The node holding an unexpired lease on ordering `host` at `now`, else undefined. */
  orderHolder(host: string, now: number): Promise<string | undefined>;
  /** Gives the lease back, if `nodeId` still holds it. */
  releaseOrder(host: string, nodeId: string): Promise<void>;
}
