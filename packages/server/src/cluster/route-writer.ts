import type { Logger } from 'pino';
import { BindMessages, ErrorCode } from '@svcrouter/protocol';
import type { Binding, Edge } from '../edge/index.js';
import type { Store } from '../store/index.js';
import type { ClusterBus } from './cluster-bus.js';

/**
 * Records this node's bindings in the shared route table as the router changes, and answers a
 * claim by another node on a hostname bound here. Writes of one hostname run in order (a chain
 * per hostname), so a late "unroute" never removes a newer claim of this node; the table decides
 * between nodes (the last claim wins, as the last bind wins on one node).
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
   * Another node claimed `hostname`. When the table agrees (the claim is newer than this node's)
   * and the same binding is still here, it is released as a same-node takeover would release it.
   */
  claimedElsewhere(hostname: string): void {
    const { store, nodeId, edge } = this.deps;
    const binding = edge.router.resolve(hostname);
    if (!binding) return;
    this.queue(hostname, async () => {
      const route = await store.cluster.routeFor(hostname);
      if (!route || route.nodeId === nodeId || edge.router.resolve(hostname) !== binding) return;
      binding.session.release(binding.tunnelId, ErrorCode.TUNNEL_RELEASED, BindMessages.takenOver(hostname));
      edge.router.remove(binding);
      this.deps.log.info({ hostname, tunnelId: binding.tunnelId, holder: route.nodeId }, 'tunnel taken over on another node');
    });
  }

  /** Claims every binding of this node again (after the table lost some of them). */
  reclaimAll(): void {
    for (const binding of [...this.deps.edge.router.bindings()]) this.added(binding);
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
    };
    await store.cluster.upsertRoute(route);
    await bus.publish({
      k: 'route',
      n: nodeId,
      h: route.hostname,
      t: route.tunnelId,
      a: route.accountId,
      l: route.localAddr,
      e: route.expiresAt,
    });
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
