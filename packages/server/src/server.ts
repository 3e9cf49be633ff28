import { hostname as osHostname } from 'node:os';
import type { Logger } from 'pino';
import { authRoutes, controlPlaneRoutes, createApi, opsRoutes } from './api/index.js';
import { readFile } from 'node:fs/promises';
import { createBearerAuthenticator, DashboardSessions, SignInLimiter } from './auth/index.js';
import { createSniResolver, loadOrCreateDevCa, type DevCa } from './certs/index.js';
import { Cluster } from './cluster/index.js';
import type { ServerConfig } from './config.js';
import { createCustomDomains } from './custom-domains.js';
import { createDashboardHandler } from './dashboard/index.js';
import { Edge, PlanWatch, startListeners, type Exchange, type Fleet } from './edge/index.js';
import { ClusterRateLimiter, LocalRateLimiter, verifyWebhookSignature } from './policy/index.js';
import { Inspector, type CapturedRequest } from './inspector/index.js';
import { drainSessions, tellLeaving } from './drain.js';
import { createMetrics, type Metrics } from './metrics/index.js';
import { startSingleSignOn } from './oidc/index.js';
import { loadOidcSealer } from './oidc-sealer.js';
import { openStore, type Store } from './store/index.js';
import { UsageMeter } from './usage/index.js';
import { createWebhooks } from './webhooks-wiring.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Least time the final usage and inspector writes retry a store that is out at shutdown. */
const FINAL_FLUSH_MIN_MS = 5000;

/** A running svc-server. */
export interface RunningServer {
  httpPort: number;
  httpsPort: number;
  store: Store;
  edge: Edge;
  devCa: DevCa | undefined;
  /** Transfer metering and quotas (GET /v1/usage: usedBytes / loadUsedBytes). */
  usage: UsageMeter;
  /** Traffic Inspector write path; records are read back with store.requests.list. */
  inspector: Inspector;
  /** Prometheus metrics; `render()` is the body of GET /metrics. */
  metrics: Metrics;
  /** Public URL of a tunnel hostname. */
  publicUrl(hostname: string): string;
  /** This node's part in a cluster (SVC_NODE_URL); undefined for a single node. */
  cluster: Cluster | undefined;
  /**
   * Graceful stop: /readyz turns 503 and agents are told the node is leaving; after `unreadyMs`
   * (0: at once) listeners take no new connections; agents moving to another node and the
   * requests in flight get up to `drainMs` (0: none) to finish, then sessions and listeners are
   * closed, usage and inspector flushed and the store closed.
   */
  close(options?: { drainMs?: number; unreadyMs?: number }): Promise<void>;
}

/**
 * Starts edge, REST API and listeners from a parsed config. Does not read process.env or
 * install signal handlers: main.ts does that. `dashboardDir` is the folder of the built
 * dashboard (index.html, assets/); without it the apex serves the API alone.
 */
export async function startServer(config: ServerConfig, log: Logger, dashboardDir?: string): Promise<RunningServer> {
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    // The query that meets the loss answers for it (503, batch kept); this says why.
    onPoolError: (err) => log.warn({ err }, 'PostgreSQL connection lost'),
  });
  const nodeId = config.nodeId ?? osHostname();
  // With several nodes, a tunnel the same agent still holds through another node stays online.
  const stale = await store.tunnels.markAllOfflineForNode(nodeId, config.cluster ? Date.now() : undefined);
  if (stale > 0) log.info({ count: stale }, 'tunnels left online by a previous run marked offline');

  const devCa = config.tlsCert ? undefined : await loadOrCreateDevCa(config.dataDir);
  let edge: Edge;
  let cluster: Cluster | undefined;
  let usage: UsageMeter;
  // The tunnels the API and domain removal reach: this node's edge, or the cluster once joined.
  // Chosen once, below, before the listeners open.
  let fleet: Fleet;
  // Signed webhooks: the sources below each get one callback; the views are read late.
  const webhooks = await createWebhooks(config, store, log, nodeId, {
    publicUrl: (hostname) => publicUrl(hostname),
    isLive: (id) => fleet.isLive(id),
    liveTunnels: (accountId) => fleet.liveTunnels(accountId),
    usedBytes: (accountId) => usage.loadUsedBytes(accountId),
  });
  // Custom domains: ACME certificates on demand, SVC_DOMAIN checks, the /v1/domains routes.
  const domains = createCustomDomains(
    config,
    store,
    log,
    () => edge,
    () => fleet,
    nodeId,
    webhooks.onCertificate,
  );
  const sni = createSniResolver({
    sharedDomain: config.sharedDomain,
    devCa,
    staticCert:
      config.tlsCert && config.tlsKey
        ? { certPem: await readFile(config.tlsCert, 'utf8'), keyPem: await readFile(config.tlsKey, 'utf8') }
        : undefined,
    ...domains.sni,
    // A TLS passthrough tunnel's name (bound here, or listed as one): the dev CA never mints for it.
    isPassthrough: async (host) => edge.tlsPassthrough.isTlsHost(host) || (await store.tunnels.byHostname(host))?.proto === 'tls',
  });

  const authenticate = createBearerAuthenticator(store);
  usage = new UsageMeter({
    store,
    log: log.child({ component: 'usage' }),
    limitsFor: (plan) => config.plans[plan],
    accountPlan: async (id) => (await store.accounts.byId(id))?.plan,
    flushIntervalMs: config.usageFlushMs,
    liveTunnels: () => tunnelsPerAccount(edge),
    tunnelsBound: () => edge.router.additions,
    onMonthTotal: webhooks.onMonthTotal,
  });
  const inspector = new Inspector({
    store,
    log: log.child({ component: 'inspector' }),
    retention: { maxAgeMs: config.inspectorRetentionDays * DAY_MS, maxPerAccount: config.inspectorMaxPerAccount },
    ownerOf: domains.ownerOf,
  });
  const metrics = createMetrics({
    liveSessions: () => edge.sessions.size,
    liveTunnels: () => edge.router.size,
    inspector: () => inspector.stats(),
    usageFlushLagMs: () => usage.flushLagMs(),
    openStreams: () => {
      let open = 0;
      for (const session of edge.sessions) open += session.mux.streamCount;
      return open;
    },
    idleSessions: () => {
      let idle = 0;
      for (const session of edge.sessions) if (session.mux.streamCount === 0) idle++;
      return idle;
    },
    sessionLimits: () => ({
      refusedNode: edge.sessionLimits.refused.node,
      refusedAccount: edge.sessionLimits.refused.account,
      maxSessions: config.maxSessions,
    }),
    ...(config.cluster ? { cluster: () => cluster?.stats() ?? { forwardedOut: 0, forwardedIn: 0, peerLinks: 0, leaseRenewals: 0 } } : {}),
  });
  // Runs on the request path for every exchange on a tunnel hostname: only in-memory work.
  const observe = (exchange: Exchange): void => {
    if (exchange.binding) usage.countRequest(exchange.binding.accountId);
    metrics.observe(exchange);
    inspector.capture(inspectorRecord(exchange));
  };
  // Agent sign-in loads the account's plan limit and month total before any bind, so the
  // Binder's quota check never meets a cold cache after a restart.
  const authenticateAgent: typeof authenticate = async (authorization) => {
    const identity = await authenticate(authorization);
    if (identity) await usage.warm(identity.account.id);
    return identity;
  };
  let publicHttpsPort = config.publicHttpsPort ?? config.httpsPort;
  const publicUrl = (hostname: string): string => `https://${hostname}${publicHttpsPort === 443 ? '' : `:${publicHttpsPort}`}`;
  // Single sign-on (SVC_OIDC_PROVIDERS): its keys come from the store, the same on every node.
  const sso = await startSingleSignOn({
    providers: config.oidcProviders,
    sessionHours: config.oidcSessionHours,
    repo: store.oidc,
    loadSealer: () => loadOidcSealer(config),
    keyActivationDelayMs: config.oidcKeyActivationSeconds * 1000,
    revocationsStaleMs: config.oidcSignOutStaleSeconds * 1000,
    apexUrl: () => publicUrl(config.sharedDomain),
    log,
  });

  // Dashboard sign-in: sessions in the store, failed sign-ins counted in memory on this node.
  const sessions = new DashboardSessions(store);
  const limiter = new SignInLimiter();
  const api = createApi({
    authenticate,
    resolveSession: (cookieValue) => sessions.resolve(cookieValue),
    log,
    dashboard: dashboardDir === undefined ? undefined : createDashboardHandler(dashboardDir),
    routes: [
      ...authRoutes({ store, sessions, limiter, signup: config.signup, onAuthEvent: (event) => log.info(event, 'dashboard sign-in') }),
      ...controlPlaneRoutes({
        store,
        liveRequests: inspector.live,
        publicUrl,
        // With several nodes these reach every node (cluster/), else this one.
        releaseTunnel: (id, reason) => fleet.releaseTunnel(id, reason),
        isLive: (id) => fleet.isLive(id),
        limitsFor: (plan) => config.plans[plan],
        tcpPorts: config.tcpPorts,
        liveTunnels: (accountId) => fleet.liveTunnels(accountId),
        meter: { usedBytes: (accountId) => usage.loadUsedBytes(accountId) },
        dropSessionsOfKey: (keyId, message) => fleet.dropSessionsOfKey(keyId, message),
        onRevoked: (event) => log.info(event, 'key revoked'),
        limiter,
        ...domains.routes,
        ...webhooks.routes,
      }),
      // Apex only, no token: tunnel hostnames never reach the API (see routes-ops.ts).
      ...opsRoutes({
        pingStore: () => store.accounts.byId('acc_readiness_probe'),
        // Requests only arrive once the listeners are up; close() sets `closed` before closing them.
        listening: () => !closed,
        metrics: { render: () => metrics.render() + domains.metrics.render() },
      }),
    ],
  });
  edge = new Edge({
    store,
    authenticate: authenticateAgent,
    heartbeatMs: config.heartbeatMs,
    sessionLimits: { perNode: config.maxSessions, perAccount: config.maxAccountSessions },
    nameGraceMs: config.nameGraceMs,
    holdMs: config.holdMs,
    log,
    sharedDomain: config.sharedDomain,
    nodeId,
    publicUrl,
    limitsFor: (plan) => config.plans[plan],
    apex: sso === undefined ? api : (req, res) => sso.apex(req, res) || api(req, res),
    observe,
    ...(sso !== undefined ? { signIn: sso.signIn } : {}),
    isOverBandwidth: (accountId) => usage.isOverQuota(accountId),
    tcpPorts: config.tcpPorts,
    tcpHost: config.host,
    meter: (accountId, bytes) => {
      usage.record(accountId, bytes);
      return !usage.shouldCutOff(accountId);
    },
    ...domains.edge,
    onTunnelChange: webhooks.onTunnelChange,
    sealSecret: webhooks.seal,
    // Several nodes count in the store they share, so a limit is one limit for the whole cluster.
    rateLimiter: config.cluster
      ? new ClusterRateLimiter({ counter: store.rateLimits, onError: (err) => log.warn({ err }, 'rate limit counted on this node alone') })
      : new LocalRateLimiter(),
    verifyWebhook: verifyWebhookSignature,
    ...(config.cluster
      ? {
          remoteBinding: (host: string) => cluster?.remoteBinding(host),
          remoteTlsCount: () => cluster?.remoteTlsCount() ?? 0,
          sharedStore: true,
          heldElsewhere: async (hostname: string, tunnelId: string) => (await cluster?.heldElsewhere(hostname, tunnelId)) ?? false,
        }
      : {}),
  });
  // A plan lowered below an account's tunnel count ends the newest tunnels beyond it, here or wherever held.
  const planWatch = new PlanWatch({
    store,
    limitsFor: (plan) => config.plans[plan],
    bindings: () => edge.router.bindings(),
    awayTunnels: () => edge.graceBindings(),
    endTunnel: (tunnelId, code, message) => edge.endTunnel(tunnelId, code, message),
    log,
    pollMs: config.planPollMs,
    sweepMs: config.planSweepMs,
  });
  if (config.cluster && config.databaseUrl) {
    try {
      cluster = await Cluster.start({
        config: config.cluster,
        nodeId,
        databaseUrl: config.databaseUrl,
        bindHost: config.host,
        heartbeatMs: config.heartbeatMs,
        store,
        edge,
        log,
        publicUrl,
        verifyWebhook: verifyWebhookSignature,
        onRemoteAccount: (accountId) => void usage.warm(accountId).catch(() => undefined),
        onPlanChanged: (accountId) => {
          void usage.reload(accountId).catch(() => undefined);
          planWatch
            .planChanged(accountId)
            .catch((err: unknown) => log.warn({ err, accountId }, 'could not check the tunnels of a changed plan'));
        },
        onDomainRemoved: (domainHost) =>
          void domains.forgetRemoved(domainHost).catch((err: unknown) => log.warn({ err, domainHost }, 'forgetting certificates failed')),
      });
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  fleet = cluster ?? edge;
  usage.start();
  planWatch.start();
  inspector.start();
  domains.start();
  await webhooks.start();

  const listeners = await startListeners(edge, {
    host: config.host,
    httpPort: config.httpPort,
    httpsPort: config.httpsPort,
    SNICallback: sni.SNICallback,
    defaultCertificate: await sni.defaultCertificate(),
    trustedProxies: config.trustedProxies,
  });
  if (config.publicHttpsPort === undefined) publicHttpsPort = listeners.httpsPort;
  log.info({ httpPort: listeners.httpPort, httpsPort: listeners.httpsPort, sharedDomain: config.sharedDomain }, 'edge listening');

  let closed = false;
  return {
    httpPort: listeners.httpPort,
    httpsPort: listeners.httpsPort,
    store,
    edge,
    devCa,
    usage,
    inspector,
    metrics,
    publicUrl,
    cluster,
    async close({ drainMs = 0, unreadyMs = 0 } = {}) {
      if (closed) return;
      // From here /readyz answers 503.
      closed = true;
      if (drainMs > 0) tellLeaving(edge.sessions);
      if (unreadyMs > 0) {
        log.info({ unreadyMs }, 'not ready; still accepting while load balancers take this node out');
        await new Promise((resolve) => setTimeout(resolve, unreadyMs));
      }
      listeners.stopAccepting();
      // Said once the listening sockets are closed, so whoever reads the log may rely on it.
      log.info({ drainMs }, 'new connections refused; finishing requests in flight');
      const closeStarted = performance.now();
      if (drainMs > 0) {
        const drained = await drainSessions(
          () => edge.sessions,
          drainMs,
          () => cluster?.forwardedInFlight() ?? 0,
        );
        log.info(drained, drained.streamsLeft === 0 ? 'requests in flight finished' : 'drain time over; open streams are cut');
      }
      await planWatch.close();
      await edge.close();
      sso?.close();
      await cluster?.close();
      await listeners.close();
      // Destroyed sockets emit 'close' on the next tick; let their exchanges finish first.
      await new Promise((resolve) => setImmediate(resolve));
      // A store out at this moment (locked, full, restarting) gets what is left of the drain
      // time, at least FINAL_FLUSH_MIN_MS, before the last counts and records are given up.
      const retryForMs = Math.max(FINAL_FLUSH_MIN_MS, drainMs - (performance.now() - closeStarted));
      const flushed = await Promise.allSettled([
        usage.stop({ retryForMs }),
        inspector.stop({ retryForMs }),
        domains.close(),
        webhooks.close(),
      ]);
      for (const result of flushed) {
        if (result.status === 'rejected') log.error({ err: result.reason }, 'final flush failed');
      }
      await store.close();
    },
  };
}

/** Live tunnels per account on this node (sampled by the meter for the daily peak). */
function tunnelsPerAccount(edge: Edge): Map<string, number> {
  const counts = new Map<string, number>();
  for (const session of edge.sessions) {
    if (session.bindings.size > 0) counts.set(session.accountId, (counts.get(session.accountId) ?? 0) + session.bindings.size);
  }
  return counts;
}

/** The inspector's record of an exchange; the owner is resolved later when no agent was bound. */
function inspectorRecord(exchange: Exchange): CapturedRequest {
  const durationMs = Math.round(exchange.durationMs);
  return {
    accountId: exchange.binding?.accountId,
    tunnelId: exchange.binding?.tunnelId,
    timestamp: Date.now() - durationMs,
    method: exchange.method,
    path: exchange.path,
    status: exchange.status,
    durationMs,
    // A TCP or TLS connection's bytes are both directions' (docs/api.md); a request's, its response body.
    bytes: exchange.proto === 'tcp' || exchange.proto === 'tls' ? exchange.bytesIn + exchange.bytesOut : exchange.bytesOut,
    ip: exchange.ip,
    userAgent: exchange.userAgent,
    proto: exchange.proto,
    host: exchange.host,
    target: exchange.target,
  };
}
