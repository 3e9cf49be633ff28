import type { Generated } from 'kysely';

// Row shapes as the database stores them: snake_case columns, timestamps as
// integer milliseconds (bigint in PostgreSQL), booleans as integer 0/1, ids as
// text. The repos map these rows to the camelCase records in store.ts.

/** accounts: one row per customer. */
export interface AccountsTable {
  id: string;
  email: string;
  name: string;
  plan: string;
  created_at: number;
  /** Encoded scrypt hash (auth/password.ts); null until the account sets a password. */
  password_hash: string | null;
}

/** api_keys: agent tokens, stored only as a sha256 hash. */
export interface ApiKeysTable {
  id: string;
  account_id: string;
  description: string;
  prefix: string;
  token_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** tunnels: one row per hostname, kept across agent runs so a pinned name keeps its id. */
export interface TunnelsTable {
  id: string;
  account_id: string;
  hostname: string;
  status: string;
  pinned: number;
  local_addr: string;
  agent_version: string;
  agent_ip: string;
  node_id: string;
  created_at: number;
  updated_at: number;
  /** The tunnel's policy as JSON (passwords hashed); null: no rules (migration 011). */
  policy: string | null;
  /** '' for a tunnel of its own; in a pool, the member's id, unique with the hostname (migration 016_pools). */
  pool_member: Generated<string>;
  /** What it carries: 'http', 'tcp' or 'tls' (migration 017_tls). */
  proto: Generated<string>;
  /** The routes of its last bind as JSON; null: none (migration 022_routes). */
  routes: Generated<string | null>;
}

/** domains: custom domains; a host may be pending on several accounts, verified on at most one. */
export interface DomainsTable {
  id: string;
  account_id: string;
  host: string;
  state: string;
  txt_value: string;
  verified_at: number | null;
  created_at: number;
  cert_state: string;
  cert_error: string | null;
  cert_expires_at: number | null;
}

/** certificates: ACME certificates by exact TLS servername, with their private keys. */
export interface CertificatesTable {
  host: string;
  cert_pem: string;
  key_pem: string;
  expires_at: number;
  issued_at: number;
}

/** acme_challenges: pending HTTP-01 answers, so any node of a cluster answers the CA. */
export interface AcmeChallengesTable {
  token: string;
  key_authorization: string;
  expires_at: number;
}

/** acme_order_leases: which node is ordering a hostname's certificate, until expires_at. */
export interface AcmeOrderLeasesTable {
  host: string;
  node_id: string;
  expires_at: number;
}

/** acme_account: one ACME account key per directory URL. */
export interface AcmeAccountTable {
  id: string;
  key_pem: string;
  url: string | null;
}

/** requests: Traffic Inspector records, one per visitor request, written in batches. */
export interface RequestsTable {
  /** `req_<12 hex ms><16 hex random>`: sorts by time. */
  id: string;
  account_id: string;
  tunnel_id: string | null;
  /** When the request arrived, ms since the epoch. */
  timestamp: number;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  /** Response body bytes. */
  bytes: number;
  ip: string;
  user_agent: string;
  proto: string;
  host: string;
  /** `host:port` of the local target that served it (tunnels with routes); null otherwise. Migration 020. */
  target: string | null;
}

/**
 * One page as stored (the columns of `request_pages` but its row id). The page's records are
 * a PackedBatch (requests/request-rows.ts) of their own (`strings` as JSON, `vals` the values' bytes, little-endian)
 * plus the parts of their ids; the key columns let readers and retention skip pages without
 * decoding them.
 */
export interface NewRequestPage {
  account_id: string;
  /** The page's newest record: its timestamp and id (the page's place in newest-first order). */
  newest_ts: number;
  newest_id: string;
  /** The page's oldest timestamp. Pages overlap in time: a slow request is captured after faster ones that arrived later. */
  oldest_ts: number;
  record_count: number;
  format: number;
  strings: string;
  vals: Buffer;
  /**
   * Per record, its id's sequence number and random bits (idSuffix): two uint32, little-endian.
   * An id is its timestamp's ms and these, so ids are built only when read.
   */
  id_parts: Buffer;
}

/**
 * request_pages: Traffic Inspector records on SQLite, one row per account per written batch
 * (requests/request-pages.ts has the layout). PostgreSQL keeps one `requests` row per record instead.
 */
export interface RequestPagesTable extends NewRequestPage {
  page_id: Generated<number>;
}

/** usage_monthly: metered transfer per account and UTC calendar month (`YYYY-MM`). */
export interface UsageMonthlyTable {
  account_id: string;
  month: string;
  bytes: number;
  requests: number;
}

/** usage_daily: daily rollup per account and UTC day (`YYYY-MM-DD`). */
export interface UsageDailyTable {
  account_id: string;
  day: string;
  bytes: number;
  requests: number;
  peak_tunnels: number;
}

/** usage_flushes: ids of applied usage flushes, so a retried flush is applied once. */
export interface UsageFlushesTable {
  id: string;
  applied_at: number;
}

/** dashboard_sessions: signed-in browsers; the cookie's secret is stored as its sha256 hex only. */
export interface DashboardSessionsTable {
  token_hash: string;
  account_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

/** sign_in_links: one-time links that set a password and sign in; sha256 hex of the link token. */
export interface SignInLinksTable {
  token_hash: string;
  account_id: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** oidc_keys: one signing key per purpose, shared by every node. */
export interface OidcKeysTable {
  purpose: string;
  key_id: string;
  secret: string;
  created_at: number;
}

/** oidc_sealed_keys: one key per purpose (the cookie HMAC key), sealed under the node's secret key. */
export interface OidcSealedKeysTable {
  purpose: string;
  key_id: string;
  sealed_secret: string;
  created_at: number;
}

/** oidc_tickets: one-time sign-in state and codes, keyed by the SHA-256 of their random value. */
export interface OidcTicketsTable {
  id: string;
  kind: string;
  payload: string;
  expires_at: number;
}

/** oidc_revocations: single sign-on sessions signed out, kept until they would have expired. */
export interface OidcRevocationsTable {
  session_id: string;
  revoked_at: number;
  expires_at: number;
}

/** oidc_signing_keys: the ES256 keys of X-Svc-Identity; the private key sealed, signed with from active_at. */
export interface OidcSigningKeysTable {
  kid: string;
  sealed_key: string;
  public_jwk: string;
  created_at: number;
  active_at: number;
}

/** The Kysely database type: table name to row shape. */
/** cluster_nodes: one row per edge node sharing the database, renewed by its heartbeat. */
export interface ClusterNodesTable {
  node_id: string;
  url: string;
  started_at: number;
  heartbeat_at: number;
  sessions: number;
  tunnels: number;
}

/** cluster_routes: which node holds the agent of a live hostname, until expires_at unless renewed. */
export interface ClusterRoutesTable {
  hostname: string;
  node_id: string;
  tunnel_id: string;
  account_id: string;
  local_addr: string;
  expires_at: number;
  agent_group: string;
  claimed_at: number;
  /** The tunnel's proto: 'http', 'tcp' or 'tls' (migration 017_tls). */
  proto: Generated<string>;
  /** The claiming binding's routes as JSON; null: none (migration 022_routes). */
  routes: Generated<string | null>;
}

/** webhooks: receivers an account registered; `secret` is sealed (webhooks/secret-box.ts), `events` a JSON array. */
export interface WebhooksTable {
  id: string;
  account_id: string;
  url: string;
  events: string;
  secret: string;
  created_at: number;
}

/** webhook_events: the outbox, one row per event (its exact JSON body); dedupe_key makes an event happen once. */
export interface WebhookEventsTable {
  id: string;
  account_id: string;
  type: string;
  body: string;
  dedupe_key: string | null;
  created_at: number;
}

/** webhook_deliveries: one event for one webhook; leased by one node while it sends. */
export interface WebhookDeliveriesTable {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_node: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
}

/** webhook_attempts: one HTTP request of a delivery and what came of it. */
export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempted_at: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  node_id: string;
}

/** tcp_addresses: an edge port held by a TCP tunnel (a lease) or reserved by an account. */
export interface TcpAddressesTable {
  port: number;
  id: string;
  account_id: string;
  reserved: number;
  node_id: string;
  /** A lease: null while bound; after a lost connection, until when it stays its account's. */
  held_until: number | null;
  created_at: number;
}

/** rate_limits: one limited key's requests in the current and the previous fixed window (rate-limits-repo.ts). */
export interface RateLimitsTable {
  key: string;
  window_index: number;
  in_window: number;
  in_previous: number;
  /** 1 when the last take was allowed: what the upsert answers. */
  allowed: number;
  expires_at: number;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  tunnels: TunnelsTable;
  requests: RequestsTable;
  request_pages: RequestPagesTable;
  usage_monthly: UsageMonthlyTable;
  usage_daily: UsageDailyTable;
  usage_flushes: UsageFlushesTable;
  domains: DomainsTable;
  certificates: CertificatesTable;
  acme_account: AcmeAccountTable;
  acme_challenges: AcmeChallengesTable;
  acme_order_leases: AcmeOrderLeasesTable;
  dashboard_sessions: DashboardSessionsTable;
  sign_in_links: SignInLinksTable;
  cluster_nodes: ClusterNodesTable;
  cluster_routes: ClusterRoutesTable;
  webhooks: WebhooksTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  tcp_addresses: TcpAddressesTable;
  oidc_keys: OidcKeysTable;
  oidc_sealed_keys: OidcSealedKeysTable;
  oidc_tickets: OidcTicketsTable;
  oidc_revocations: OidcRevocationsTable;
  oidc_signing_keys: OidcSigningKeysTable;
  rate_limits: RateLimitsTable;
}
