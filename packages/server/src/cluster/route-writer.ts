import type { Logger } from 'pino';
import { BindMessages, ErrorCode } from '@svcrouter/protocol';
import type { Binding, Edge } from '../edge/index.js';
import type { Store } from '../store/index.js';
import type { ClusterBus } from './cluster-bus.js';
import { claimMessage } from './claim-message.js';

/**
 * Records this node's bindings in the shared route table as the router changes, and answers a
 * claim by another node on a hostname bound here. Writes of one hostname run in order (a chain
 * per hostname), so a late "unroute" never removes a newer claim of this node; the table decides
 * between nodes (the last bind wins, as on one node, unless both are sessions of one agent).
 */
export class RouteWriter {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly deps: {
      nodeId: string;
      leaseMs: number;
      store: Store;
      edge: Edge;
      bus: ClusterBus;
      log: Logger;
    },
  ) {}

  /** A binding went live on this node: claim its hostname. */
  added(binding: Binding): void {
    this.queue(binding.hostname, () => this.claim(binding));
  }

  /** A binding left this node: let its hostname go, unless a newer binding here holds it again. */
  removed(binding: Binding): void {
    const { store, nodeId, bus, edge } = this.deps;
    this.queue(binding.hostname, async () => {
      if (edge.router.resolve(binding.hostname)) return;
      if (await store.cluster.deleteRoute(binding.hostname, nodeId)) await bus.publish({ k: 'unroute', n: nodeId, h: binding.hostname });
    });
  }

  /**
   * Another node claimed `hostname`. When the table holds a claim of another agent bound later
   * than the binding here (the same agent's other session is no rival), the binding here is
   * released as a same-node takeover would release it. Both nodes compare the same two claims,
   * so exactly one of two rivals keeps the name.
   */
  claimedElsewhere(hostname: string): void {
    const { store, nodeId, edge } = this.deps;
    const binding = edge.router.resolve(hostname);
    if (!binding) return;
    this.queue(hostname, async () => {
      if (edge.router.resolve(hostname) !== binding) return;
      const now = Date.now();
      const boundAt = binding.boundAt ?? 0;
      const rivals = (await store.cluster.routesFor(hostname)).filter(
        (route) =>
          route.nodeId !== nodeId &&
          route.expiresAt > now &&
          !(binding.group !== undefined && route.group === binding.group) &&
          (route.claimedAt > boundAt || (route.claimedAt === boundAt && route.nodeId > nodeId)),
      );
      // Members of one pool on several nodes are no rivals (the store keeps a pool and a tunnel of its own apart).
      let rival = rivals[0];
      if (binding.pool !== undefined) {
        rival = undefined;
        for (const route of rivals) if (!(await store.tunnels.byId(binding.accountId, route.tunnelId))?.pool) rival ??= route;
      }
      if (!rival) return;
      binding.session.release(binding.tunnelId, ErrorCode.TUNNEL_RELEASED, BindMessages.takenOver(hostname));
      edge.router.remove(binding);
      this.deps.log.info({ hostname, tunnelId: binding.tunnelId, holder: rival.nodeId }, 'tunnel taken over on another node');
    });
  }

  /** Claims every binding of this node again (after the table lost some of them). */
  reclaimAll(): void {
    for (const binding of [...this.deps.edge.router.bindings()]) this.added(binding);
  }

  /** Resolves once the writes queued so far for `hostname` have finished. */
  async settled(hostname: string): Promise<void> {
    await this.chains.get(hostname);
  }

  /** Resolves once every write queued so far has finished. */
  async idle(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  private async claim(binding: Binding): Promise<void> {
    const { store, nodeId, bus, edge, leaseMs } = this.deps;
    if (edge.router.byTunnelId(binding.tunnelId) !== binding) return;
    const route = {
      hostname: binding.hostname,
      nodeId,
      tunnelId: binding.tunnelId,
      accountId: binding.accountId,
      localAddr: binding.local.slice(0, 200),
      expiresAt: Date.now() + leaseMs,
      group: binding.group ?? '',
      claimedAt: binding.boundAt ?? 0,
      ...(binding.proto === 'tls' ? { proto: 'tls' as const } : {}),
      ...(binding.routesJson !== undefined ? { routes: binding.routesJson } : {}),
    };
    await store.cluster.upsertRoute(route);
    await bus.publish(claimMessage(route));
  }

  private queue(hostname: string, task: () => Promise<void>): void {
    const previous = this.chains.get(hostname) ?? Promise.resolve();
    const next = previous
      .then(task)
      .catch((error: unknown) => this.deps.log.error({ err: error, hostname }, 'could not record the route of a tunnel'));
    this.chains.set(hostname, next);
    void next.then(() => {
      if (this.chains.get(hostname) === next) this.chains.delete(hostname);
    });
  }
}
