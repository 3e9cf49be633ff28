import type { ClusterRoute } from '../store/index.js';
import type { Binding } from '../edge/index.js';

/** A hostname held on another node, with the binding that carries its requests there (made on first use). */
export interface RemoteRoute {
  route: ClusterRoute;
  binding: Binding | undefined;
}

/**
 * This node's copy of the other nodes' routes (hostname → holder), so a visitor's request never
 * waits for the database: filled from the table, kept current by notifications, and reloaded
 * on every renewal tick in case one was missed. This node's own bindings are not in it (its
 * router is their truth).
 */
export class RouteCache {
  private readonly byHost = new Map<string, RemoteRoute>();
  private readonly byTunnel = new Map<string, RemoteRoute>();

  /** The route of a hostname, if its lease runs past `now`. */
  get(hostname: string, now: number): RemoteRoute | undefined {
    const entry = this.byHost.get(hostname);
    return entry && entry.route.expiresAt > now ? entry : undefined;
  }

  /** The live route of a tunnel id. */
  byTunnelId(tunnelId: string, now: number): RemoteRoute | undefined {
    const entry = this.byTunnel.get(tunnelId);
    return entry && entry.route.expiresAt > now ? entry : undefined;
  }

  /** Records a claim; a route known for the same hostname is replaced. */
  set(route: ClusterRoute): void {
    const previous = this.byHost.get(route.hostname);
    if (previous && sameRoute(previous.route, route)) {
      previous.route = route;
      return;
    }
    if (previous) this.byTunnel.delete(previous.route.tunnelId);
    const entry: RemoteRoute = { route, binding: undefined };
    this.byHost.set(route.hostname, entry);
    this.byTunnel.set(route.tunnelId, entry);
  }

  /** Forgets a node's claim on a hostname; another node's claim stays. */
  delete(hostname: string, nodeId?: string): void {
    const entry = this.byHost.get(hostname);
    if (!entry || (nodeId !== undefined && entry.route.nodeId !== nodeId)) return;
    this.byHost.delete(hostname);
    if (this.byTunnel.get(entry.route.tunnelId) === entry) this.byTunnel.delete(entry.route.tunnelId);
  }

  /** Forgets every route of a node (it left). */
  dropNode(nodeId: string): void {
    for (const entry of [...this.byHost.values()]) if (entry.route.nodeId === nodeId) this.delete(entry.route.hostname);
  }

  /** Replaces the whole copy with the table's live routes (bindings already made are kept). */
  replaceAll(routes: readonly ClusterRoute[]): void {
    const fresh = new Set<string>();
    for (const route of routes) {
      fresh.add(route.hostname);
      this.set(route);
    }
    for (const hostname of [...this.byHost.keys()]) if (!fresh.has(hostname)) this.delete(hostname);
  }

  /** Live routes of an account. */
  *forAccount(accountId: string, now: number): Generator<ClusterRoute> {
    for (const entry of this.byHost.values()) if (entry.route.accountId === accountId && entry.route.expiresAt > now) yield entry.route;
  }

  /** How many live routes an account has. */
  countForAccount(accountId: string, now: number): number {
    let count = 0;
    for (const entry of this.byHost.values()) if (entry.route.accountId === accountId && entry.route.expiresAt > now) count++;
    return count;
  }

  get size(): number {
    return this.byHost.size;
  }
}

function sameRoute(a: ClusterRoute, b: ClusterRoute): boolean {
  return a.nodeId === b.nodeId && a.tunnelId === b.tunnelId && a.accountId === b.accountId && a.localAddr === b.localAddr;
}
