import { hostname as osHostname } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  LOG_LEVELS,
  MIN_HEARTBEAT_MS,
  MAX_HEARTBEAT_MS,
  EMAIL_RE,
  NODE_ID_RE,
  ok,
  expected,
  envVar,
  integer,
  hostname,
  bindHost,
  httpUrl,
  nodeUrl,
  cidrList,
  clusterSecret,
  msList,
  postgresUrl,
  oneOf,
  matching,
  dnsServers,
  edgeTarget,
  freezeTarget,
  plansOverride,
  oidcProviders,
  hours,
  tcpPortRange,
  dropUndefined,
} from './config-checks.js';
import type { Check, LogLevel, OidcProviderConfig, TcpPortRange } from './config-checks.js';

export type { LogLevel, OidcProviderConfig, TcpPortRange } from './config-checks.js';
import { parseEdgeTarget, type EdgeTarget } from './domains/index.js';
import type { Plan, PlanLimits } from './store/index.js';

// svc-server's configuration: parsed once at boot from SVC_* variables,
// frozen, and passed down as a plain object. Defaults live in DEFAULTS,
// validation in the per-variable checks below. An empty variable counts as
// unset. Error messages name the variable and never echo its value (it may
// hold a password).

export interface ServerConfig {
  /**
   * SVC_TCP_PORTS. Default `20000-20999`: the ports TCP tunnels get (`svc tcp`), a free one at
   * random per new tunnel; `off` turns TCP tunnels off. A single port `N` is the range N-N.
   */
  readonly tcpPorts: TcpPortRange | undefined;
  /** SVC_SHARED_DOMAIN. Default `localhost`. Lower-cased; tunnels are `<sub>.<sharedDomain>`, the API is at the apex. */
  readonly sharedDomain: string;
  /** SVC_HTTP_PORT. Default 8080; 0 picks a free port (tests). */
  readonly httpPort: number;
  /** SVC_HTTPS_PORT. Default 8443; 0 picks a free port (tests). */
  readonly httpsPort: number;
  /**
   * SVC_BIND_HOST. Default `::`: every interface, IPv6 and IPv4 (dual-stack), so
   * `localhost` works whether it resolves to 127.0.0.1 or ::1. Set `0.0.0.0` on
   * hosts without IPv6, or `127.0.0.1` to stay private.
   */
  readonly host: string;
  /** SVC_DATA_DIR. Default `./svc-data`, resolved to an absolute path: SQLite file, certificates, dev CA. */
  readonly dataDir: string;
  /** SVC_DATABASE_URL. Default unset (SQLite in dataDir); a postgres:// or postgresql:// URL selects PostgreSQL. */
  readonly databaseUrl: string | undefined;
  /** SVC_TLS_CERT. Default unset (a dev CA and wildcard are generated). Absolute path to the shared-domain wildcard certificate (PEM); set together with tlsKey. */
  readonly tlsCert: string | undefined;
  /** SVC_TLS_KEY. Default unset. Absolute path to the private key (PEM) of tlsCert; set together with tlsCert. */
  readonly tlsKey: string | undefined;
  /** SVC_ACME_DIRECTORY. Default Let's Encrypt production; Pebble's URL in tests. */
  readonly acmeDirectory: string;
  /** SVC_ACME_EMAIL. Default unset (ACME account without contact). */
  readonly acmeEmail: string | undefined;
  /** SVC_DNS_SERVERS. Default `1.1.1.1,8.8.8.8`. Resolvers for TXT verification: `ip`, `ip:port` or `[ipv6]:port`. */
  readonly dnsServers: readonly string[];
  /**
   * SVC_EDGE_TARGET. Default: the shared domain when it has two or more labels
   * (`tunnels.example.com`), else unset (`localhost`). Where custom domains must point:
   * one hostname (CNAME target) and/or IPv4 addresses (A records), comma-separated.
   * Shown by the domains API and compared by its DNS preflight; unset: no target shown.
   */
  readonly edgeTarget: Readonly<EdgeTarget> | undefined;
  /** SVC_PLANS. Default DEFAULT_PLANS; JSON such as `{"free":{"tunnels":3}}` is merged over them per field. */
  readonly plans: Readonly<Record<Plan, Readonly<PlanLimits>>>;
  /**
   * SVC_PUBLIC_HTTPS_PORT. Default unset: the HTTPS port actually bound (httpsPort,
   * or the port the OS chose when that is 0). The port written in public URLs;
   * set 443 behind a port-forwarding proxy so URLs carry no port.
   */
  readonly publicHttpsPort: number | undefined;
  /** SVC_HEARTBEAT_MS. Default 5000: agent heartbeat interval the edge offers (an agent may ask for 1-60 s); the edge ends a session silent for two. */
  readonly heartbeatMs: number;
  /** SVC_MAX_SESSIONS. Default 20000: agent sessions this node accepts; more get 503 `Session limit reached`. */
  readonly maxSessions: number;
  /** SVC_MAX_ACCOUNT_SESSIONS. Default 1000: agent sessions one account may hold on this node; more get 429. */
  readonly maxAccountSessions: number;
  /**
   * SVC_TRUSTED_PROXIES. Default none. Comma-separated CIDRs (or addresses) of load balancers
   * whose connections may start with a PROXY protocol v1 or v2 header naming the visitor.
   */
  readonly trustedProxies: readonly string[];
  /**
   * SVC_OIDC_PROVIDERS. Default none. A JSON array of `{"name", "issuer", "clientId",
   * "clientSecret"}`: the OpenID Connect providers a tunnel's `--oidc <name>` may pick; each
   * registers the callback `<apex>/auth/oidc/<name>/callback`.
   */
  readonly oidcProviders: readonly OidcProviderConfig[];
  /** SVC_OIDC_SESSION_HOURS. Default 12: how long a visitor's single sign-on session lasts (decimals allowed). */
  readonly oidcSessionHours: number;
  /**
   * SVC_OIDC_KEY_ACTIVATION_SECONDS. Default 60: after `svc-server oidc rotate-key`, how long the
   * new signing key is published before tokens are signed with it. Set the same on every node and
   * for the command.
   */
  readonly oidcKeyActivationSeconds: number;
  /**
   * SVC_OIDC_SIGNOUT_STALE_SECONDS. Default 30: how long a node admits signed-in visitors while it
   * cannot read the list of signed-out sessions (the store out); past it, their requests get 503
   * until a read succeeds, rather than admit a session signed out on another node meanwhile.
   */
  readonly oidcSignOutStaleSeconds: number;
  /** SVC_LOG_LEVEL. Default `info`; one of fatal, error, warn, info, debug, trace, silent. */
  readonly logLevel: LogLevel;
  /** SVC_NODE_ID. Default the OS hostname. Names this edge node in the shared tunnel table; unique per node. */
  readonly nodeId: string;
  /** SVC_INSPECTOR_RETENTION_DAYS. Default 3: captured requests older than this many days are deleted. */
  readonly inspectorRetentionDays: number;
  /** SVC_INSPECTOR_MAX_PER_ACCOUNT. Default 100000: newest captured requests kept per account. */
  readonly inspectorMaxPerAccount: number;
  /** SVC_USAGE_FLUSH_MS. Default 1000: how often metered usage is written; a crash loses at most about this much metering. */
  readonly usageFlushMs: number;
  /** SVC_SIGNUP. Default `open`: anyone reaching the apex can create an account in the dashboard; `closed` leaves account creation to `svc-server account create`. */
  readonly signup: 'open' | 'closed';
  /**
   * SVC_NAME_GRACE_MS. Default 30000: after an agent's connection is lost (not a clean exit),
   * its names stay reserved for its account this long, so no other account takes one while it
   * reconnects; 0 turns this off.
   */
  readonly nameGraceMs: number;
  /**
   * SVC_HOLD_MS. Default 10000: a visitor's request for a name in its grace period (its agent's
   * connection was lost) waits up to this long for the agent to bind it again, and is delivered
   * then instead of getting the offline page; 0 turns this off.
   */
  readonly holdMs: number;
  /**
   * SVC_PLAN_POLL_MS. Default 2000: how often a node reads the plans of the accounts with more
   * tunnels on it than the smallest plan allows, to end those beyond a lowered plan when the
   * cluster's notification of the change did not reach it (one node alone always relies on it).
   */
  readonly planPollMs: number;
  /**
   * SVC_PLAN_SWEEP_MS. Default 60000: how often a node reads the plans and every node's online
   * counts of all the accounts it serves a tunnel of (a lowered plan whose notification was lost).
   */
  readonly planSweepMs: number;
  /**
   * SVC_DRAIN_MS. Default 30000: on SIGTERM or SIGINT, how long the requests in flight may take to
   * finish after the listeners stop taking connections and the agents are told the node is
   * leaving; 0 closes at once.
   */
  readonly drainMs: number;
  /**
   * SVC_UNREADY_MS. Default 0: on SIGTERM or SIGINT, how long the node answers /readyz with 503
   * while still accepting connections (its agents told to move already) before the listeners
   * stop: a load balancer's health checks take it out first, so none of its connections is
   * refused or reset. Set it above the balancer's time to notice (interval × failures).
   */
  readonly unreadyMs: number;
  /**
   * SVC_NODE_URL + SVC_CLUSTER_SECRET. Default unset: a single node. Set (both, with a
   * PostgreSQL SVC_DATABASE_URL): this node joins the others sharing the database and carries
   * visitors to whichever node holds a tunnel's agent (cluster/).
   */
  readonly cluster: Readonly<ClusterConfig> | undefined;
  /**
   * SVC_WEBHOOK_ALLOW_PRIVATE. Default false: webhook receivers that are or resolve to loopback,
   * private or link-local addresses are refused, and receiver URLs must be https://. `true`
   * allows both (receivers on this machine in development and tests).
   */
  readonly webhookAllowPrivate: boolean;
  /**
   * SVC_WEBHOOK_RETRY_MS. Default 5000,30000,120000,600000,3600000: the pauses (ms) before the
   * 2nd, 3rd… attempt of a webhook delivery, each with ±20% jitter; the last repeats until 24 h
   * after the event.
   */
  readonly webhookRetryMs: readonly number[];
  /**
   * SVC_WEBHOOK_KEY. Default unset: webhook signing secrets are sealed at rest under a key derived
   * from SVC_CLUSTER_SECRET on a cluster, else under `<data dir>/webhook.key` (made on first
   * start). Set (16+ characters), the key is derived from it; every node needs the same value.
   */
  readonly webhookKey: string | undefined;
}

/** How this node takes part in a cluster of nodes sharing one PostgreSQL. */
export interface ClusterConfig {
  /**
   * SVC_NODE_URL: where the other nodes reach this node's internal listener, `http://host:port`.
   * The node listens on that port (on SVC_BIND_HOST); port 0 picks a free one and advertises it.
   */
  readonly nodeUrl: string;
  /** SVC_CLUSTER_SECRET: shared by every node; authenticates node-to-node links (HMAC, never sent). */
  readonly secret: string;
}

/** One OpenID Connect provider of SVC_OIDC_PROVIDERS. */
/** Plan limits before SVC_PLANS overrides. */
export const DEFAULT_PLANS: Readonly<Record<Plan, Readonly<PlanLimits>>> = Object.freeze({
  free: Object.freeze({ tunnels: 10, domains: 2, bandwidthBytes: 53_687_091_200, webhooks: 2, tcpAddresses: 1 }),
  pro: Object.freeze({ tunnels: 1000, domains: 25, bandwidthBytes: 1_099_511_627_776, webhooks: 20, tcpAddresses: 20 }),
});

/** Every default, in one place. */
export const DEFAULTS = Object.freeze({
  sharedDomain: 'localhost',
  httpPort: 8080,
  httpsPort: 8443,
  host: '::',
  dataDir: './svc-data',
  acmeDirectory: 'https://acme-v02.api.letsencrypt.org/directory',
  dnsServers: Object.freeze(['1.1.1.1', '8.8.8.8']),
  heartbeatMs: 5000,
  maxSessions: 20_000,
  maxAccountSessions: 1000,
  logLevel: 'info' as LogLevel,
  inspectorRetentionDays: 3,
  inspectorMaxPerAccount: 100_000,
  usageFlushMs: 1000,
  signup: 'open' as 'open' | 'closed',
  nameGraceMs: 30_000,
  holdMs: 10_000,
  planPollMs: 2_000,
  planSweepMs: 60_000,
  drainMs: 30_000,
  unreadyMs: 0,
  webhookRetryMs: Object.freeze([5_000, 30_000, 120_000, 600_000, 3_600_000]),
  tcpPorts: Object.freeze({ from: 20000, to: 20999 }) as TcpPortRange | undefined,
  oidcSessionHours: 12,
  oidcKeyActivationSeconds: 60,
  oidcSignOutStaleSeconds: 30,
});

const plans: Check<ServerConfig['plans']> = (raw) => {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return expected('JSON such as {"free":{"tunnels":3}}');
  }
  const parsed = plansOverride.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') ?? '';
    if (issue?.code === 'unrecognized_keys') {
      return expected(`only free/pro with tunnels/domains/bandwidthBytes/webhooks/tcpAddresses (unknown: ${issue.keys.join(', ')})`);
    }
    if (where.includes('.')) return expected(`a non-negative integer at ${where}`);
    return expected(`JSON such as {"free":{"tunnels":3}}${where ? ` (bad value at ${where})` : ''}`);
  }
  const merge = (name: Plan) => Object.freeze({ ...DEFAULT_PLANS[name], ...dropUndefined(parsed.data[name] ?? {}) });
  return ok(Object.freeze({ free: merge('free'), pro: merge('pro') }));
};

const ENV_SCHEMA = z.object({
  SVC_SHARED_DOMAIN: envVar(DEFAULTS.sharedDomain, hostname),
  SVC_HTTP_PORT: envVar(DEFAULTS.httpPort, integer(0, 65535)),
  SVC_HTTPS_PORT: envVar(DEFAULTS.httpsPort, integer(0, 65535)),
  SVC_BIND_HOST: envVar(DEFAULTS.host, bindHost),
  SVC_DATA_DIR: envVar(DEFAULTS.dataDir, ok),
  SVC_DATABASE_URL: envVar<string | undefined>(undefined, postgresUrl),
  SVC_TLS_CERT: envVar<string | undefined>(undefined, ok),
  SVC_TLS_KEY: envVar<string | undefined>(undefined, ok),
  SVC_ACME_DIRECTORY: envVar(DEFAULTS.acmeDirectory, httpUrl),
  SVC_ACME_EMAIL: envVar<string | undefined>(undefined, matching(EMAIL_RE, 'an email address')),
  SVC_DNS_SERVERS: envVar(DEFAULTS.dnsServers, dnsServers),
  SVC_EDGE_TARGET: envVar<Readonly<EdgeTarget> | undefined>(undefined, edgeTarget),
  SVC_PLANS: envVar(DEFAULT_PLANS, plans),
  SVC_PUBLIC_HTTPS_PORT: envVar<number | undefined>(undefined, integer(1, 65535)),
  SVC_HEARTBEAT_MS: envVar(DEFAULTS.heartbeatMs, integer(MIN_HEARTBEAT_MS, MAX_HEARTBEAT_MS)),
  SVC_MAX_SESSIONS: envVar(DEFAULTS.maxSessions, integer(1, 1_000_000)),
  SVC_MAX_ACCOUNT_SESSIONS: envVar(DEFAULTS.maxAccountSessions, integer(1, 1_000_000)),
  SVC_LOG_LEVEL: envVar(DEFAULTS.logLevel, oneOf(LOG_LEVELS)),
  SVC_NODE_ID: envVar<string | undefined>(undefined, matching(NODE_ID_RE, '1-100 characters of A-Z a-z 0-9 . _ -')),
  SVC_INSPECTOR_RETENTION_DAYS: envVar(DEFAULTS.inspectorRetentionDays, integer(1, 3650)),
  SVC_INSPECTOR_MAX_PER_ACCOUNT: envVar(DEFAULTS.inspectorMaxPerAccount, integer(1, 100_000_000)),
  SVC_USAGE_FLUSH_MS: envVar(DEFAULTS.usageFlushMs, integer(100, 60_000)),
  SVC_SIGNUP: envVar(DEFAULTS.signup, oneOf(['open', 'closed'] as const)),
  SVC_NAME_GRACE_MS: envVar(DEFAULTS.nameGraceMs, integer(0, 3_600_000)),
  SVC_HOLD_MS: envVar(DEFAULTS.holdMs, integer(0, 600_000)),
  SVC_PLAN_POLL_MS: envVar(DEFAULTS.planPollMs, integer(100, 600_000)),
  SVC_PLAN_SWEEP_MS: envVar(DEFAULTS.planSweepMs, integer(100, 86_400_000)),
  SVC_DRAIN_MS: envVar(DEFAULTS.drainMs, integer(0, 600_000)),
  SVC_UNREADY_MS: envVar(DEFAULTS.unreadyMs, integer(0, 600_000)),
  SVC_TCP_PORTS: envVar(DEFAULTS.tcpPorts, tcpPortRange),
  SVC_NODE_URL: envVar<string | undefined>(undefined, nodeUrl),
  SVC_CLUSTER_SECRET: envVar<string | undefined>(undefined, clusterSecret),
  SVC_WEBHOOK_ALLOW_PRIVATE: envVar<'true' | 'false'>('false', oneOf(['true', 'false'] as const)),
  SVC_WEBHOOK_RETRY_MS: envVar(DEFAULTS.webhookRetryMs, msList),
  SVC_WEBHOOK_KEY: envVar<string | undefined>(undefined, clusterSecret),
  SVC_TRUSTED_PROXIES: envVar<readonly string[]>(Object.freeze([]), cidrList),
  SVC_OIDC_PROVIDERS: envVar<readonly OidcProviderConfig[]>(Object.freeze([]), oidcProviders),
  SVC_OIDC_SESSION_HOURS: envVar(DEFAULTS.oidcSessionHours, hours),
  SVC_OIDC_KEY_ACTIVATION_SECONDS: envVar(DEFAULTS.oidcKeyActivationSeconds, integer(0, 86_400)),
  SVC_OIDC_SIGNOUT_STALE_SECONDS: envVar(DEFAULTS.oidcSignOutStaleSeconds, integer(1, 3_600)),
});

/**
 * Parses SVC_* variables into a frozen ServerConfig; relative paths resolve
 * against `cwd`. Throws an Error such as `invalid SVC_HTTP_PORT: expected an
 * integer 0-65535`, one `; `-separated entry per bad variable.
 */
export function loadConfig(env: Record<string, string | undefined>, cwd: string = process.cwd()): ServerConfig {
  const parsed = ENV_SCHEMA.safeParse(env);
  if (!parsed.success) {
    throw new Error(parsed.error.issues.map((i) => `invalid ${String(i.path[0])}: ${i.message}`).join('; '));
  }
  const e = parsed.data;
  if ((e.SVC_TLS_CERT === undefined) !== (e.SVC_TLS_KEY === undefined)) {
    const missing = e.SVC_TLS_CERT === undefined ? 'SVC_TLS_CERT' : 'SVC_TLS_KEY';
    throw new Error(`invalid ${missing}: expected SVC_TLS_CERT and SVC_TLS_KEY to be set together`);
  }
  if (e.SVC_NODE_URL !== undefined && e.SVC_CLUSTER_SECRET === undefined) {
    throw new Error('invalid SVC_CLUSTER_SECRET: SVC_NODE_URL is set, so the secret shared by the nodes must be set too');
  }
  if (e.SVC_CLUSTER_SECRET !== undefined && e.SVC_NODE_URL === undefined) {
    throw new Error('invalid SVC_NODE_URL: SVC_CLUSTER_SECRET is set, so this node must say where its peers reach it');
  }
  if (e.SVC_NODE_URL !== undefined && e.SVC_DATABASE_URL === undefined) {
    throw new Error('invalid SVC_NODE_URL: several nodes share one PostgreSQL store; set SVC_DATABASE_URL to it');
  }
  const clash = tcpPortsClash(e.SVC_TCP_PORTS, {
    SVC_HTTP_PORT: e.SVC_HTTP_PORT,
    SVC_HTTPS_PORT: e.SVC_HTTPS_PORT,
    SVC_NODE_URL: nodeUrlPort(e.SVC_NODE_URL),
  });
  if (clash !== undefined) throw new Error(clash);
  const cluster =
    e.SVC_NODE_URL !== undefined && e.SVC_CLUSTER_SECRET !== undefined
      ? Object.freeze({ nodeUrl: e.SVC_NODE_URL, secret: e.SVC_CLUSTER_SECRET })
      : undefined;
  return Object.freeze({
    sharedDomain: e.SVC_SHARED_DOMAIN,
    httpPort: e.SVC_HTTP_PORT,
    httpsPort: e.SVC_HTTPS_PORT,
    host: e.SVC_BIND_HOST,
    dataDir: resolve(cwd, e.SVC_DATA_DIR),
    databaseUrl: e.SVC_DATABASE_URL,
    tlsCert: e.SVC_TLS_CERT === undefined ? undefined : resolve(cwd, e.SVC_TLS_CERT),
    tlsKey: e.SVC_TLS_KEY === undefined ? undefined : resolve(cwd, e.SVC_TLS_KEY),
    acmeDirectory: e.SVC_ACME_DIRECTORY,
    acmeEmail: e.SVC_ACME_EMAIL,
    dnsServers: e.SVC_DNS_SERVERS,
    edgeTarget: e.SVC_EDGE_TARGET ?? defaultEdgeTarget(e.SVC_SHARED_DOMAIN),
    plans: e.SVC_PLANS,
    publicHttpsPort: e.SVC_PUBLIC_HTTPS_PORT,
    heartbeatMs: e.SVC_HEARTBEAT_MS,
    maxSessions: e.SVC_MAX_SESSIONS,
    maxAccountSessions: e.SVC_MAX_ACCOUNT_SESSIONS,
    trustedProxies: e.SVC_TRUSTED_PROXIES,
    oidcProviders: e.SVC_OIDC_PROVIDERS,
    oidcSessionHours: e.SVC_OIDC_SESSION_HOURS,
    oidcKeyActivationSeconds: e.SVC_OIDC_KEY_ACTIVATION_SECONDS,
    oidcSignOutStaleSeconds: e.SVC_OIDC_SIGNOUT_STALE_SECONDS,
    logLevel: e.SVC_LOG_LEVEL,
    nodeId: e.SVC_NODE_ID ?? osHostname(),
    inspectorRetentionDays: e.SVC_INSPECTOR_RETENTION_DAYS,
    inspectorMaxPerAccount: e.SVC_INSPECTOR_MAX_PER_ACCOUNT,
    usageFlushMs: e.SVC_USAGE_FLUSH_MS,
    signup: e.SVC_SIGNUP,
    nameGraceMs: e.SVC_NAME_GRACE_MS,
    holdMs: e.SVC_HOLD_MS,
    planPollMs: e.SVC_PLAN_POLL_MS,
    planSweepMs: e.SVC_PLAN_SWEEP_MS,
    drainMs: e.SVC_DRAIN_MS,
    unreadyMs: e.SVC_UNREADY_MS,
    tcpPorts: e.SVC_TCP_PORTS,
    cluster,
    webhookAllowPrivate: e.SVC_WEBHOOK_ALLOW_PRIVATE === 'true',
    webhookRetryMs: e.SVC_WEBHOOK_RETRY_MS,
    webhookKey: e.SVC_WEBHOOK_KEY,
  });
}

/**
 * Why SVC_TCP_PORTS cannot include a port the edge listens on itself: a tunnel given that port
 * could never listen there, and a reservation of it would never bind.
 */
function tcpPortsClash(range: TcpPortRange | undefined, own: Record<string, number | undefined>): string | undefined {
  if (range === undefined) return undefined;
  for (const [name, port] of Object.entries(own)) {
    if (port === undefined || port === 0 || port < range.from || port > range.to) continue;
    const shown = range.from === range.to ? String(range.from) : `${range.from}-${range.to}`;
    return `invalid SVC_TCP_PORTS: ${shown} includes ${name}'s port ${port}; TCP tunnels need ports the edge does not listen on itself`;
  }
  return undefined;
}

/** The port this node listens on for its peers, from SVC_NODE_URL (as the cluster reads it). */
function nodeUrlPort(nodeUrl: string | undefined): number | undefined {
  return nodeUrl === undefined ? undefined : Number(new URL(nodeUrl).port || 80);
}

/** The shared domain as the edge target, when it can be one (two or more labels). */
function defaultEdgeTarget(sharedDomain: string): Readonly<EdgeTarget> | undefined {
  const target = parseEdgeTarget(sharedDomain);
  return target && freezeTarget(target);
}
