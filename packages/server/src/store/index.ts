// The store: one interface, two engines (SQLite and PostgreSQL), the schema and its migrations,
// one repository per kind of record. Everything else reaches the database through it.
// May use: hostname.
export type {
  Account,
  AccountRepo,
  KeyRecord,
  KeyRepo,
  NewAccount,
  NewKey,
  Plan,
  PlanLimits,
  Store,
  Tunnel,
  TunnelBinding,
  TunnelRepo,
  TunnelStatus,
} from './store.js';
export { PLANS } from './store.js';
export { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from './engine/store-unavailable.js';
export type {
  AcmeAccount,
  AcmeAccountRepo,
  AcmeSharedRepo,
  CertificateRepo,
  CertState,
  Domain,
  DomainRepo,
  DomainState,
  NewDomain,
  SharedChallenge,
  StoredCertificate,
} from './domain-records.js';
export { CERT_STATES, DOMAIN_STATES } from './domain-records.js';
export type { NewRequestRecord, RequestCursor, RequestQuery, RequestRecord, RequestRepo, StoredIds } from './requests/request-records.js';
export { MAX_REQUEST_PAGE, statusClassRange } from './requests/request-records.js';
export { storedRecord } from './requests/request-rows.js';
export type { DailyUsage, MonthTotal, UsageDelta, UsageRepo } from './usage-records.js';
export type { OidcKey, OidcRepo, OidcSealedKey, OidcSealedKeysRepo } from './oidc-records.js';
export type { OidcRevocation, OidcSessionsRepo, OidcSigningKey } from './oidc-session-records.js';
export type { DashboardSession, DashboardSessionRepo, NewDashboardSession, NewSignInLink, SignInLinkRepo } from './sign-in-records.js';
export { PolicyConflictError, PoolConflictError, StoreConflictError } from './store-conflict-error.js';
export { openStore, isPostgresUrl, SQLITE_FILE, type OpenStoreOptions } from './open-store.js';
export type { ClusterNode, ClusterRepo, ClusterRoute } from './cluster-records.js';
export type {
  AttemptOutcome,
  AttemptRecord,
  DeliveryJob,
  DeliveryRecord,
  DeliveryState,
  DeliveryWithAttempts,
  NewWebhook,
  NewWebhookEvent,
  WebhookRecord,
  WebhookRepo,
} from './webhook-records.js';
export { DELIVERY_STATES } from './webhook-records.js';
export { newId } from './engine/ids.js';
export type { TcpAddress, TcpAddressRepo, TcpClaim } from './tcp-address-records.js';
export type { RateLimitRepo, RateLimitVerdict } from './rate-limit-records.js';
