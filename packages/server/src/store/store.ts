// The store's public contract. Every method is async and returns plain
// objects; "not found" is `undefined`, never an exception. Only broken
// invariants (a duplicate email, a hostname held online by someone else)
// throw, as StoreConflictError.

import type { ClusterRepo } from './cluster-records.js';
import type { AcmeAccountRepo, AcmeSharedRepo, CertificateRepo, DomainRepo } from './domain-records.js';
import type { RequestRepo } from './requests/request-records.js';
import type { DashboardSessionRepo, SignInLinkRepo } from './sign-in-records.js';
import type { OidcRepo } from './oidc-records.js';
import type { RateLimitRepo } from './rate-limit-records.js';
import type { TcpAddressRepo } from './tcp-address-records.js';
import type { UsageRepo } from './usage-records.js';
import type { WebhookRepo } from './webhook-records.js';

/** Plan names, as stored in accounts.plan. */
export const PLANS = ['free', 'pro'] as const;
export type Plan = (typeof PLANS)[number];

/** Limits of one plan: the defaults in config.ts, overridable by SVC_PLANS. */
export interface PlanLimits {
  /** Concurrent online tunnels. */
  tunnels: number;
  /** Custom domains. */
  domains: number;
  /** Monthly transfer, in bytes. */
  bandwidthBytes: number;
  /** Webhook receivers. */
  webhooks: number;
  /** TCP addresses (ports) the account may reserve; absent counts as none (the config always sets it). */
  tcpAddresses?: number;
}

/** Tunnel status values, as stored in tunnels.status. */
export type TunnelStatus = 'online' | 'offline';

export interface Account {
  id: string;
  /** Stored lower-cased, so lookups are case-insensitive. */
  email: string;
  name: string;
  plan: Plan;
  createdAt: number;
}

export interface KeyRecord {
  id: string;
  accountId: string;
  description: string;
  /** First characters of the token, shown in listings. */
  prefix: string;
  /** sha256 hex of the token; the token itself is never stored. */
  tokenHash: string;
  createdAt: number;
  lastUsedAt: number | undefined;
  revokedAt: number | undefined;
}

export interface Tunnel {
  id: string;
  accountId: string;
  /** Stored lower-cased. */
  hostname: string;
  status: TunnelStatus;
  /** The agent asked for this name (SVC_SUBDOMAIN / SVC_DOMAIN) rather than a random one. */
  pinned: boolean;
  localAddr: string;
  agentVersion: string;
  agentIp: string;
  /** The edge node holding the agent session. */
  nodeId: string;
  createdAt: number;
  updatedAt: number;
  /** The policy of its last bind as JSON (passwords hashed); undefined: no rules. */
  policy?: string;
  /** A member of a pool: one of several tunnels of the account on this hostname. */
  pool: boolean;
  /** What it carries (its last bind's): `http`, `tcp` or `tls` (TLS passthrough). */
  proto: TunnelProto;
  /** The routes of its last bind as JSON (`[{path, local}]`); undefined: none. */
  routes?: string;
}

/** What a tunnel carries. */
export type TunnelProto = 'http' | 'tcp' | 'tls';

export interface NewAccount {
  email: string;
  name: string;
  plan: Plan;
}

export interface NewKey {
  accountId: string;
  description: string;
  prefix: string;
  tokenHash: string;
}

export interface TunnelBinding {
  accountId: string;
  hostname: string;
  pinned: boolean;
  localAddr: string;
  agentVersion: string;
  agentIp: string;
  nodeId: string;
  /** The bind's policy as JSON; undefined: no rules, which may not replace a live tunnel that has some (PolicyConflictError). */
  policy?: string;
  /** Joins the hostname's pool (a row of its own) instead of taking the name over; a pool and a tunnel of its own never share a name (PoolConflictError). */
  pool?: boolean;
  /** What the bind carries; default `http`. */
  proto?: TunnelProto;
  /** The bind's routes as JSON; undefined: none. */
  routes?: string;
}

export interface AccountRepo {
  /** Creates an account; throws StoreConflictError when the email is taken. */
  create(input: NewAccount): Promise<Account>;
  byId(id: string): Promise<Account | undefined>;
  byEmail(email: string): Promise<Account | undefined>;
  /** Changes the plan; undefined when there is no such account. */
  setPlan(id: string, plan: Plan): Promise<Account | undefined>;
  /** The plans of these accounts, by id (an unknown id is left out); a few queries however many ids. */
  plansOf(ids: readonly string[]): Promise<Map<string, Plan>>;
  /** The stored password hash; undefined when the account has none (or does not exist). */
  passwordHash(id: string): Promise<string | undefined>;
  /** Sets (replaces) the password hash; false when there is no such account. */
  setPasswordHash(id: string, passwordHash: string): Promise<boolean>;
  count(): Promise<number>;
}

export interface KeyRepo {
  insert(input: NewKey): Promise<KeyRecord>;
  /** Finds a key by token hash, revoked or not (the caller decides). */
  byTokenHash(tokenHash: string): Promise<KeyRecord | undefined>;
  /** Non-revoked keys of the account, newest first. */
  listForAccount(accountId: string): Promise<KeyRecord[]>;
  /** Revokes one of the account's own keys; false when not found, another account's, or already revoked. */
  revoke(accountId: string, id: string): Promise<boolean>;
  countActive(accountId: string): Promise<number>;
  /** Records a use of the key; never moves lastUsedAt backwards. */
  touch(id: string, atMs: number): Promise<void>;
}

export interface TunnelRepo {
  /**
   * Marks the hostname online for the account. Same account: the row (and its
   * id) is reused. Another account's offline row is taken over (deleted, fresh
   * row). Another account's online row: StoreConflictError.
   */
  upsertOnline(input: TunnelBinding): Promise<Tunnel>;
  /**
   * As upsertOnline, unless the account already has `limit` other hostnames online: then
   * undefined. On PostgreSQL the count and the write run under a lock per account held by the
   * database, so binds on several nodes sharing it never pass the limit together.
   */
  claimOnline(input: TunnelBinding, limit: number): Promise<Tunnel | undefined>;
  setOffline(id: string): Promise<void>;
  /** Account-scoped: another account's tunnel is undefined. */
  byId(accountId: string, id: string): Promise<Tunnel | undefined>;
  byHostname(hostname: string): Promise<Tunnel | undefined>;
  /** All the account's tunnels, newest first. */
  listForAccount(accountId: string): Promise<Tunnel[]>;
  /** Deletes one of the account's tunnels and returns it; undefined when not found or not theirs. */
  delete(accountId: string, id: string): Promise<Tunnel | undefined>;
  countOnline(accountId: string): Promise<number>;
  /** Online tunnels of each of these accounts (none online: left out); a few queries however many ids. */
  countOnlineOf(accountIds: readonly string[]): Promise<Map<string, number>>;
  /**
   * At node start: rows a crashed process left online become offline. Returns how many. With
   * `heldElsewhereAt` (Date.now()), rows whose hostname another node holds a live route for stay
   * online: the same agent's session there still serves them.
   */
  markAllOfflineForNode(nodeId: string, heldElsewhereAt?: number): Promise<number>;
}

export interface Store {
  accounts: AccountRepo;
  keys: KeyRepo;
  tunnels: TunnelRepo;
  /** Traffic Inspector records. */
  requests: RequestRepo;
  /** Metered transfer: monthly totals and daily rollups. */
  usage: UsageRepo;
  domains: DomainRepo;
  certificates: CertificateRepo;
  acme: AcmeAccountRepo;
  /** HTTP-01 answers and order leases shared by the nodes of a cluster. */
  acmeShared: AcmeSharedRepo;
  /** Signed-in dashboard browsers. */
  sessions: DashboardSessionRepo;
  /** One-time sign-in links. */
  signInLinks: SignInLinkRepo;
  /** Nodes sharing the database and where each live hostname is held (several edge nodes). */
  cluster: ClusterRepo;
  /** Webhook receivers and the outbox of their events (webhooks/). */
  webhooks: WebhookRepo;
  /** Ports of TCP tunnels: running agents' leases and accounts' reservations. */
  tcpAddresses: TcpAddressRepo;
  /** Single sign-on: shared signing keys and one-time tickets. */
  oidc: OidcRepo;
  /** Rate limits counted for the whole cluster. */
  rateLimits: RateLimitRepo;
  /** Waits for inspector batches in flight, then closes the database connection(s); the store is unusable afterwards. */
  close(): Promise<void>;
}
