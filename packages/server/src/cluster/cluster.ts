import type { Logger } from 'pino';
import type { ClusterConfig } from '../config.js';
import {
  newBinding,
  pickMember,
  routeTableOfJson,
  type Binding,
  type Edge,
  type Fleet,
  type LiveBinding,
  type WebhookVerifier,
} from '../edge/index.js';
import type { Store } from '../store/index.js';
import { ClusterBus, type ClusterMessage } from './cluster-bus.js';
import { PeerLinks } from './peer-links.js';
import { PeerListener } from './peer-listener.js';
import { relayToAgent } from './relay.js';
import { RouteCache } from './route-cache.js';
import { RouteWriter } from './route-writer.js';

/** How long a route (and a node) stays valid without renewal: a node that dies silently loses its tunnels after this. */
export const LEASE_MS = 10_000;
/** How often a node renews its leases, records its heartbeat and reloads the others' routes. */
export const RENEW_MS = 3_000;
/**
 * How long a joining node waits for its links to the live peers before its listeners open: a
 * visitor the load balancer sends to a node just restarted finds the tunnels held elsewhere.
 */
const LINKS_READY_MS = 5_000;
/**
 * How long requests other nodes carry here still reach a tunnel unbound a moment ago while its
 * session stays open (an agent moving off a leaving node): those nodes chose this node before
 * the notification that it let the name go reached them.
 */
const UNBOUND_GRACE_MS = 2_000;

export interface ClusterDeps {
  config: ClusterConfig;
  nodeId: string;
  databaseUrl: string;
  /** Address the internal listener binds (SVC_BIND_HOST). */
  bindHost: string;
  heartbeatMs: number;
  store: Store;
  edge: Edge;
  log: Logger;
  publicUrl(hostname: string): string;
  /** An account whose tunnel another node holds was first seen here (the usage meter loads its month). */
  onRemoteAccount?(accountId: string): void;
  /** Another node removed the custom domain `domainHost`: drop the certificates it covered from memory. */
  onDomainRemoved?(domainHost: string): void;
  /** An account's plan changed (on any node or from the account command): re-read its limits. */
  onPlanChanged?(accountId: string): void;
  /** Checks webhook signatures for the tunnels of this node's agents, whichever node the request entered. */
  verifyWebhook?: WebhookVerifier;
}

/**
 * This node's part in a cluster of nodes sharing one PostgreSQL: the internal listener peers
 * send visitors' requests to, links to every live peer, the route table (this node's leases
 * written, the others' cached), and cluster-wide revocation and release (the Fleet of every node).
 */
export class Cluster implements Fleet {
  private readonly routes = new RouteCache();
  private readonly links: PeerLinks;
  private readonly listener: PeerListener;
  private readonly bus: ClusterBus;
  private readonly writer: RouteWriter;
  private readonly startedAt = Date.now();
  private readonly accountsSeen = new Set<string>();
  private url = '';
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  /** Something changed while a tick was running (a node joined): run one more after it. */
  private tickAgain = false;
  private closed = false;
  private forwardedOut = 0;
  private forwardedIn = 0;
  private leaseRenewals = 0;
  private readonly lately = new Map<string, Binding>();

  private constructor(private readonly deps: ClusterDeps) {
    const { nodeId, config, heartbeatMs, log, edge } = deps;
    const clusterLog = log.child({ component: 'cluster' });
    this.links = new PeerLinks({ nodeId, secret: config.secret, heartbeatMs, log: clusterLog });
    this.listener = new PeerListener({
      nodeId,
      secret: config.secret,
      host: deps.bindHost,
      port: Number(new URL(config.nodeUrl).port || 80),
      heartbeatMs,
      log: clusterLog,
      onStream: (stream) => {
        this.forwardedIn++;
        relayToAgent(
          stream,
          (tunnelId) => {
            const binding = edge.router.byTunnelId(tunnelId) ?? this.unboundLately(tunnelId);
            // A pool's route names one member: the request goes to whichever member of this node is least busy.
            return binding?.pool !== undefined ? pickMember(binding.pool) : binding;
          },
          deps.verifyWebhook,
        );
      },
    });
    this.bus = new ClusterBus({
      databaseUrl: deps.databaseUrl,
      log: clusterLog,
      onMessage: (message) => this.onMessage(message),
      onListening: () => void this.tick(),
    });
    this.writer = new RouteWriter({ nodeId, leaseMs: LEASE_MS, store: deps.store, edge, bus: this.bus, log: clusterLog });
  }

  /** Joins the cluster: listens for peers, announces this node, loads the routes, starts renewing. */
  static async start(deps: ClusterDeps): Promise<Cluster> {
    const cluster = new Cluster(deps);
    await cluster.join();
    return cluster;
  }

  /** This node's internal URL as announced to peers (the bound port when SVC_NODE_URL asked for 0). */
  get nodeUrl(): string {
    return this.url;
  }

  /** Counts for /metrics: requests carried between nodes, open links, lease renewals. */
  stats(): { forwardedOut: number; forwardedIn: number; peerLinks: number; leaseRenewals: number } {
    const { forwardedOut, forwardedIn, leaseRenewals } = this;
    return { forwardedOut, forwardedIn, peerLinks: this.links.connected().length, leaseRenewals };
  }

  /** Visitors' requests this node is carrying to other nodes right now (a drain waits for them). */
  forwardedInFlight(): number {
    return this.links.openStreams();
  }

  /** The binding carrying requests for `host` to the node holding it, or undefined (asked once per visitor request). */
  remoteBinding(host: string): Binding | undefined {
    // A hostname held on two nodes is served through either: a node whose link is down (it
    // died a moment ago) is passed over at once, without waiting for its lease to end.
    const entry = this.routes.get(host, Date.now(), (nodeId) => this.links.session(nodeId) !== undefined);
    if (!entry) return undefined;
    const session = this.links.session(entry.route.nodeId);
    if (!session) return undefined;
    this.forwardedOut++;
    if (entry.binding?.session !== session) {
      const { route } = entry;
      entry.binding = newBinding({
        tunnelId: route.tunnelId,
        accountId: route.accountId,
        hostname: route.hostname,
        url: this.deps.publicUrl(route.hostname),
        local: route.localAddr,
        pinned: false,
        session,
        proto: route.proto === 'tls' ? 'tls' : undefined,
        // The holder's routes: this node names the target in its record and 502 page as the holder would.
        routes: routeTableOfJson(route.routes),
      });
    }
    return entry.binding;
  }

  /** Hostnames other nodes route to TLS passthrough tunnels: this node's HTTPS port reads SNI while there are some. */
  remoteTlsCount(): number {
    return this.routes.tlsCount;
  }

  /** Releases a tunnel wherever it is held. True when it was live on some node. */
  releaseTunnel(tunnelId: string, reason: string): boolean {
    const here = this.deps.edge.releaseTunnel(tunnelId, reason);
    // Held here and on another node too (one agent's two sessions): both let it go.
    const elsewhere = this.routes.byTunnelId(tunnelId, Date.now()) !== undefined;
    if (!here || elsewhere) void this.bus.publish({ k: 'release', t: tunnelId, msg: reason });
    return here || elsewhere;
  }

  /**
   * Whether another node still holds this tunnel (the same agent's session there), asked after
   * this node's own claim is gone from the table: when both sessions drop together, each node
   * removes its claim before it looks, so the later one sees none and records the tunnel offline.
   */
  async heldElsewhere(hostname: string, tunnelId: string): Promise<boolean> {
    await this.writer.settled(hostname);
    const now = Date.now();
    const routes = await this.deps.store.cluster.routesFor(hostname);
    return routes.some((route) => route.nodeId !== this.deps.nodeId && route.tunnelId === tunnelId && route.expiresAt > now);
  }

  /** Drops the agents using a revoked key on every node; returns how many this node dropped. */
  dropSessionsOfKey(keyId: string, message: string): number {
    const dropped = this.deps.edge.dropSessionsOfKey(keyId, message);
    void this.bus.publish({ k: 'revoke', key: keyId, msg: message });
    return dropped;
  }

  /** Tells the other nodes a custom domain was removed here, so they drop its certificates from memory. */
  forgetCertificates(domainHost: string): void {
    void this.bus.publish({ k: 'forget', n: this.deps.nodeId, d: domainHost });
  }

  /** Whether a tunnel is live on any node. */
  isLive(tunnelId: string): boolean {
    return this.deps.edge.isLive(tunnelId) || this.routes.byTunnelId(tunnelId, Date.now()) !== undefined;
  }

  /** Live tunnels of an account on every node; one held on two nodes counts once. */
  liveTunnels(accountId: string): number {
    let remote = 0;
    for (const route of this.routes.forAccount(accountId, Date.now())) if (!this.deps.edge.router.resolve(route.hostname)) remote++;
    return this.deps.edge.liveTunnels(accountId) + remote;
  }

  /** An account's live bindings on every node. */
  *liveBindings(accountId: string): Generator<LiveBinding> {
    const seen = new Set<string>();
    for (const binding of this.deps.edge.liveBindings(accountId)) {
      seen.add(binding.hostname);
      yield binding;
    }
    for (const route of this.routes.forAccount(accountId, Date.now())) {
      if (seen.has(route.hostname)) continue;
      yield { tunnelId: route.tunnelId, hostname: route.hostname, url: this.deps.publicUrl(route.hostname) };
    }
  }

  /** Leaves the cluster: this node's routes and row are deleted and the peers told, then links close. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.ticking;
    await this.writer.idle();
    try {
      await this.deps.store.cluster.deleteNode(this.deps.nodeId);
      await this.bus.publish({ k: 'node', n: this.deps.nodeId, gone: 1 });
    } catch (error) {
      this.deps.log.warn({ err: error }, 'could not say goodbye to the cluster; peers drop this node when its leases expire');
    }
    this.links.close();
    await Promise.all([this.bus.close(), this.listener.close()]);
  }

  private async join(): Promise<void> {
    const { nodeId, store, edge, log } = this.deps;
    const port = await this.listener.listen();
    const url = new URL(this.deps.config.nodeUrl);
    url.port = String(port);
    this.url = url.origin;
    try {
      // Routes a previous run of this node left behind are void: its agents are gone.
      await store.cluster.deleteNode(nodeId);
      await this.heartbeat();
      await this.bus.start();
      edge.router.watch({
        added: (b) => this.writer.added(b),
        removed: (b) => {
          this.rememberUnbound(b);
          this.writer.removed(b);
        },
      });
      await this.bus.publish({ k: 'node', n: nodeId });
      await this.tick();
      const deadline = Date.now() + LINKS_READY_MS;
      while (!this.links.allConnected() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    } catch (error) {
      await Promise.allSettled([this.listener.close(), this.bus.close()]);
      throw error;
    }
    this.timer = setInterval(() => void this.tick(), RENEW_MS);
    this.timer.unref();
    log.info({ nodeId, nodeUrl: this.url, leaseMs: LEASE_MS }, 'joined the cluster');
  }

  private async heartbeat(): Promise<void> {
    const { nodeId, store, edge } = this.deps;
    await store.cluster.upsertNode({
      nodeId,
      url: this.url,
      startedAt: this.startedAt,
      heartbeatAt: Date.now(),
      sessions: edge.sessions.size,
      tunnels: edge.router.size,
    });
  }

  /** Renews this node's leases and heartbeat, reloads the nodes and their routes, reaps expired leases. */
  private tick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.ticking) {
      this.tickAgain = true;
      return this.ticking;
    }
    this.ticking = this.renewAndReload()
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'cluster renewal failed; retrying'))
      .finally(() => {
        this.ticking = undefined;
        if (this.tickAgain) {
          this.tickAgain = false;
          void this.tick();
        }
      });
    return this.ticking;
  }

  private async renewAndReload(): Promise<void> {
    const { nodeId, store, edge } = this.deps;
    const now = Date.now();
    await this.heartbeat();
    const renewed = await store.cluster.renewRoutes(nodeId, now + LEASE_MS);
    this.leaseRenewals++;
    // Fewer rows than bindings: the table lost some (a failed write, a reaper that saw them
    // expire while the database was out of reach). Claim them all again.
    if (renewed !== edge.router.size) this.writer.reclaimAll();
    const nodes = await store.cluster.listNodes();
    const alive = nodes.filter((node) => node.heartbeatAt > now - LEASE_MS);
    this.links.sync(alive);
    const aliveIds = new Set(alive.map((node) => node.nodeId));
    const routes = (await store.cluster.liveRoutes(now)).filter((r) => r.nodeId !== nodeId && aliveIds.has(r.nodeId));
    this.routes.replaceAll(routes);
    this.followTcpPorts();
    for (const route of routes) this.sawAccount(route.accountId);
    // Leases of nodes gone silent: their tunnels are offline for the API too.
    for (const gone of await store.cluster.reapRoutes(now)) {
      if (!aliveIds.has(gone)) await store.tunnels.markAllOfflineForNode(gone, now);
    }
  }

  private onMessage(message: ClusterMessage): void {
    const { nodeId, edge } = this.deps;
    switch (message.k) {
      case 'route':
        if (message.n === nodeId) return;
        this.routes.set({
          hostname: message.h,
          nodeId: message.n,
          tunnelId: message.t,
          accountId: message.a,
          localAddr: message.l,
          expiresAt: message.e,
          group: message.g ?? '',
          claimedAt: message.c ?? 0,
          ...(message.p === 'tls' ? { proto: 'tls' as const } : {}),
          ...(message.r !== undefined ? { routes: message.r } : {}),
        });
        if (message.R === 1) void this.readRoutes(message.h, message.n, message.c ?? 0);
        this.sawAccount(message.a);
        this.writer.claimedElsewhere(message.h);
        if (edge.tcp?.isTcp(message.h) === true) this.followTcpPorts();
        return;
      case 'unroute':
        if (message.n !== nodeId) this.routes.delete(message.h, message.n);
        if (edge.tcp?.isTcp(message.h) === true) this.followTcpPorts();
        return;
      case 'node':
        if (message.n === nodeId) return;
        if (message.gone) {
          this.routes.dropNode(message.n);
          this.followTcpPorts();
        }
        void this.tick();
        return;
      case 'revoke':
        edge.dropSessionsOfKey(message.key, message.msg);
        return;
      case 'release':
        edge.releaseTunnel(message.t, message.msg);
        return;
      case 'forget':
        if (message.n !== nodeId) this.deps.onDomainRemoved?.(message.d);
        return;
      case 'plan':
        this.deps.onPlanChanged?.(message.a);
        return;
    }
  }

  /**
   * A claim whose routes were too long for its notification: its row has them. Until it is read the
   * claim routes requests already, and their records name no target (a route table that large is
   * rare, and the read takes one round trip).
   */
  private async readRoutes(hostname: string, nodeId: string, claimedAt: number): Promise<void> {
    try {
      const row = (await this.deps.store.cluster.routesFor(hostname)).find((route) => route.nodeId === nodeId);
      // A newer claim (or none) since: its own notification or the next reload brings what is current.
      if (row === undefined || row.claimedAt !== claimedAt || row.routes === undefined) return;
      if (this.routes.byNode(hostname, nodeId)?.route.claimedAt === claimedAt) this.routes.set(row);
    } catch (error) {
      this.deps.log.warn({ err: error, hostname }, 'could not read the routes of a tunnel held on another node');
    }
  }

  /** Every node listens on the ports of TCP tunnels held anywhere, so a visitor may enter at any node. */
  private followTcpPorts(): void {
    this.deps.edge.tcp?.remote.follow(this.routes.liveHostnames(Date.now()));
  }

  private rememberUnbound(binding: Binding): void {
    this.lately.set(binding.tunnelId, binding);
    setTimeout(() => {
      if (this.lately.get(binding.tunnelId) === binding) this.lately.delete(binding.tunnelId);
    }, UNBOUND_GRACE_MS).unref();
  }

  /** A binding removed within UNBOUND_GRACE_MS whose session is still open (see there). */
  private unboundLately(tunnelId: string): Binding | undefined {
    const binding = this.lately.get(tunnelId);
    return binding && !binding.session.isClosed ? binding : undefined;
  }

  private sawAccount(accountId: string): void {
    if (this.accountsSeen.has(accountId)) return;
    this.accountsSeen.add(accountId);
    this.deps.onRemoteAccount?.(accountId);
  }
}
