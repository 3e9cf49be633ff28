import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { AcmeOrderer, AcmePolling } from './acme-order.js';
import type { SharedOrdering } from './acme-shared.js';
import type { PemCertificate } from './dev-ca.js';

// The issuer's options and surface; the behaviour is in acme-issuer.ts.

/** What the issuer needs; main.ts fills it from ServerConfig. */
export interface AcmeIssuerOptions {
  store: Pick<Store, 'domains' | 'certificates' | 'acme'>;
  /** SVC_ACME_DIRECTORY. */
  directoryUrl: string;
  /** SVC_ACME_EMAIL; undefined registers the account without a contact. */
  email?: string | undefined;
  /** SVC_SHARED_DOMAIN: names at or under it are never ordered (the dev CA or the operator's wildcard serves them). */
  sharedDomain: string;
  /** Extra yes/no ANDed with "a verified domain covers it", e.g. "a tunnel is bound at this name"; default none. */
  hostInUse?: (hostname: string) => boolean | Promise<boolean>;
  /** Where order outcomes are logged; default not logged. */
  logger?: Logger;
  /** Epoch ms; default Date.now. */
  now?: () => number;
  /** Default MAX_ORDERS_PER_MINUTE (acme-limiter.ts). */
  maxOrdersPerMinute?: number;
  /** Default RETRY_AFTER_FAILURE_MS (acme-limiter.ts). */
  retryAfterFailureMs?: readonly number[];
  /** Default RENEW_BEFORE_EXPIRY_MS (acme-issuer.ts). */
  renewBeforeMs?: number;
  /** acme-client status polling; default its own. Tests shorten it. */
  polling?: AcmePolling;
  /** Nodes of a cluster (one PostgreSQL): HTTP-01 answers in the store, one order per name across nodes. Absent: memory only. */
  shared?: SharedOrdering;
  /** Replaces the ACME client (tests count or fail orders without a CA); default createAcmeOrderer. */
  orderer?: AcmeOrderer;
  /** Sees each order this node placed end, after its state is stored (webhooks' certificate.issued / certificate.failed). */
  onOutcome?(outcome: OrderOutcomeEvent): void;
}

/** How one order ended: `host` is the certificate's name, `domainHost` the verified domain covering it. */
export type OrderOutcomeEvent =
  | { host: string; domainHost: string; issued: true; expiresAt: number }
  | { host: string; domainHost: string; issued: false; reason: string };

/** Counters since the issuer was created. */
export interface IssuerStats {
  ordersStarted: number;
  issued: number;
  failed: number;
}

/** One pass of the renewal loop. */
export interface RenewalReport {
  renewed: number;
  failed: number;
  /** Skipped: backoff, the order cap, or hostInUse said no. Tried again next pass. */
  deferred: number;
  /** No verified domain covers the host any more: its certificate was deleted. */
  removed: number;
}

/** On-demand ACME certificates for verified custom domains; see createAcmeIssuer. */
export interface AcmeIssuer {
  /** The decision hook for createSniResolver: a verified domain covers the name (and hostInUse agrees). */
  isServedHost(hostname: string): Promise<boolean>;
  /** The certificate source for createSniResolver; undefined when the name is not served or no certificate can be had now. */
  onDemand(hostname: string): Promise<PemCertificate | undefined>;
  /** The key authorization the edge serves at `/.well-known/acme-challenge/<token>` on its HTTP port; with `shared`, a miss in memory asks the store. */
  challengeResponse(token: string): string | undefined | Promise<string | undefined>;
  /** Re-orders every stored certificate expiring within renewBeforeMs, one at a time. */
  renewDue(): Promise<RenewalReport>;
  /** Runs renewDue now and then every intervalMs (a pass still running is not overlapped); close() stops it. */
  startRenewal(intervalMs: number): void;
  /** Drops the host's certificate from memory, e.g. after its domain was deleted. */
  forget(hostname: string): void;
  /** Counters since creation. */
  stats(): IssuerStats;
  /** Stops renewal and waits for orders in flight. */
  close(): Promise<void>;
}
