import type { ClusterRoute } from '../store/index.js';
import type { Binding } from '../edge/index.js';

/** A hostname held on another node, with the binding that carries its requests there (made on first use). */
export interface RemoteRoute {
  route: ClusterRoute;
  binding: Binding | undefined;
}

/**
 * This node's copy of the other nodes' routes (hostname → the nodes holding it), so a visitor's
 * request never waits for the database: filled from the table, kept current by notifications,
 * and reloaded on every renewal tick in case one was missed. One hostname may be held on several
 * nodes at once (one agent's sessions to two nodes). This node's own bindings are not in it (its
 * router is their truth).
 */
export class RouteCache {
  private readonly byHost = new Map<string, Map<string, RemoteRoute>>();
  private readonly byTunnel = new Map<string, Set<RemoteRoute>>();
  /** Claims of TLS passthrough tunnels held here: this node reads SNI on its HTTPS port while there are some. */
  private tlsClaims = 0;

  /**
   * The route a request for `hostname` takes: among the live claims whose node `usable` accepts
   * (a link to it is up), the latest, since a newer agent taking the name over wins.
   */
  get(hostname: string, now: number, usable: (nodeId: string) => boolean = () => true): RemoteRoute | undefined {
    const nodes = this.byHost.get(hostname);
    if (!nodes) return undefined;
    let best: RemoteRoute | undefined;
    for (const entry of nodes.values()) {
      if (entry.route.expiresAt <= now || !usable(entry.route.nodeId)) continue;
      if (!best || entry.route.claimedAt > best.route.claimedAt) best = entry;
    }
    return best;
  }

  /** One node's claim on `hostname`, live or not. */
  byNode(hostname: string, nodeId: string): RemoteRoute | undefined {
    return this.byHost.get(hostname)?.get(nodeId);
  }

  /** A live route of a tunnel id. */
  byTunnelId(tunnelId: string, now: number): RemoteRoute | undefined {
    for (const entry of this.byTunnel.get(tunnelId) ?? []) if (entry.route.expiresAt > now) return entry;
    return undefined;
  }

  /** Records a node's claim; that node's earlier claim on the hostname is replaced, other nodes' stay. */
  set(route: ClusterRoute): void {
    let nodes = this.byHost.get(route.hostname);
    if (!nodes) this.byHost.set(route.hostname, (nodes = new Map()));
    const previous = nodes.get(route.nodeId);
    if (previous && sameRoute(previous.route, route)) {
      previous.route = route;
      return;
    }
    if (previous) this.untrack(previous);
    const entry: RemoteRoute = { route, binding: undefined };
    nodes.set(route.nodeId, entry);
    if (route.proto === 'tls') this.tlsClaims++;
    let tunnels = this.byTunnel.get(route.tunnelId);
    if (!tunnels) this.byTunnel.set(route.tunnelId, (tunnels = new Set()));
    tunnels.add(entry);
  }

  /** Forgets one node's claim on a hostname, or every claim when no node is named. */
  delete(hostname: string, nodeId?: string): void {
    const nodes = this.byHost.get(hostname);
    if (!nodes) return;
    for (const entry of [...nodes.values()]) {
      if (nodeId !== undefined && entry.route.nodeId !== nodeId) continue;
      nodes.delete(entry.route.nodeId);
      this.untrack(entry);
    }
    if (nodes.size === 0) this.byHost.delete(hostname);
  }

  /** Forgets every route of a node (it left). */
  dropNode(nodeId: string): void {
    for (const hostname of [...this.byHost.keys()]) this.delete(hostname, nodeId);
  }

  /** Replaces the whole copy with the table's live routes (bindings already made are kept). */
  replaceAll(routes: readonly ClusterRoute[]): void {
    const fresh = new Set<string>();
    for (const route of routes) {
      fresh.add(`${route.nodeId}\n${route.hostname}`);
      this.set(route);
    }
    for (const [hostname, nodes] of [...this.byHost]) {
      for (const nodeId of [...nodes.keys()]) if (!fresh.has(`${nodeId}\n${hostname}`)) this.delete(hostname, nodeId);
    }
  }

  /** Live routes of an account, one per hostname however many nodes hold it. */
  *forAccount(accountId: string, now: number): Generator<ClusterRoute> {
    for (const hostname of this.byHost.keys()) {
      const entry = this.get(hostname, now);
      if (entry && entry.route.accountId === accountId) yield entry.route;
    }
  }

  /** Hostnames some other node holds a live claim on. */
  *liveHostnames(now: number): Generator<string> {
    for (const hostname of this.byHost.keys()) if (this.get(hostname, now) !== undefined) yield hostname;
  }

  /** Whether another node holds a live claim on `hostname`. */
  has(hostname: string, now: number): boolean {
    return this.get(hostname, now) !== undefined;
  }

  /** Number of hostnames held on other nodes. */
  get size(): number {
    return this.byHost.size;
  }

  /** Claims of other nodes on TLS passthrough hostnames (expired ones included until the next reload). */
  get tlsCount(): number {
    return this.tlsClaims;
  }

  private untrack(entry: RemoteRoute): void {
    if (entry.route.proto === 'tls') this.tlsClaims--;
    const tunnels = this.byTunnel.get(entry.route.tunnelId);
    tunnels?.delete(entry);
    if (tunnels?.size === 0) this.byTunnel.delete(entry.route.tunnelId);
  }
}

function sameRoute(a: ClusterRoute, b: ClusterRoute): boolean {
  return (
    a.nodeId === b.nodeId &&
    a.tunnelId === b.tunnelId &&
    a.accountId === b.accountId &&
    a.localAddr === b.localAddr &&
    a.group === b.group &&
    a.claimedAt === b.claimedAt &&
    a.proto === b.proto &&
    a.routes === b.routes
  );
}
