import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ClusterRoute } from './cluster-records.js';
import type { Store } from './store.js';

// ClusterRepo part of the Store contract; runStoreContract calls it inside its suite.

/** Registers the cluster-table contract tests. */
export function runClusterContract(store: () => Store): void {
  const unique = (): string => randomBytes(4).toString('hex');
  const route = (over: Partial<ClusterRoute> = {}): ClusterRoute => ({
    hostname: `${unique()}.example.test`,
    nodeId: `node-${unique()}`,
    tunnelId: `tun_${unique()}`,
    accountId: `acc_${unique()}`,
    localAddr: 'localhost:3000',
    expiresAt: 10_000,
    group: '',
    claimedAt: 1,
    ...over,
  });
  const liveFor = async (hostname: string, now: number): Promise<ClusterRoute | undefined> =>
    (await store().cluster.liveRoutes(now)).find((r) => r.hostname === hostname);
  const byNode = (routes: ClusterRoute[]): ClusterRoute[] => [...routes].sort((a, b) => a.nodeId.localeCompare(b.nodeId));

  describe('cluster', () => {
    it('records nodes and refreshes their heartbeat', async () => {
      const nodeId = `node-${unique()}`;
      const node = { nodeId, url: 'http://10.0.0.5:8090', startedAt: 1, heartbeatAt: 2, sessions: 0, tunnels: 0 };
      await store().cluster.upsertNode(node);
      await store().cluster.upsertNode({ ...node, heartbeatAt: 5, sessions: 3, tunnels: 4 });
      const found = (await store().cluster.listNodes()).filter((n) => n.nodeId === nodeId);
      assert.deepEqual(found, [{ ...node, heartbeatAt: 5, sessions: 3, tunnels: 4 }]);
      await store().cluster.deleteNode(nodeId);
      assert.equal(
        (await store().cluster.listNodes()).find((n) => n.nodeId === nodeId),
        undefined,
      );
    });

    it('a route is live until its lease expires; each node holds its own claim on a hostname', async () => {
      const first = route({ expiresAt: 10_000, group: 'agent-1' });
      await store().cluster.upsertRoute(first);
      assert.deepEqual(await liveFor(first.hostname, 9_999), first);
      assert.equal(await liveFor(first.hostname, 10_000), undefined);
      const second = { ...first, nodeId: `node-${unique()}`, expiresAt: 20_000, claimedAt: 7 };
      await store().cluster.upsertRoute(second);
      assert.deepEqual(await liveFor(first.hostname, 15_000), second);
      assert.deepEqual(byNode(await store().cluster.routesFor(first.hostname)), byNode([first, second]));
      // A node's new claim replaces only its own row.
      const again = { ...first, tunnelId: `tun_${unique()}`, claimedAt: 9, group: '' };
      await store().cluster.upsertRoute(again);
      assert.deepEqual(byNode(await store().cluster.routesFor(first.hostname)), byNode([again, second]));
      assert.equal(await store().cluster.deleteRoute(first.hostname, first.nodeId), true);
      assert.equal(await store().cluster.deleteRoute(first.hostname, first.nodeId), false);
      assert.deepEqual(await liveFor(first.hostname, 15_000), second);
      assert.equal(await store().cluster.deleteRoute(second.hostname, second.nodeId), true);
      assert.equal(await liveFor(first.hostname, 0), undefined);
    });

    it("a route carries its binding's routes, replaced with the claim", async () => {
      const routes = JSON.stringify([{ path: '/api', local: 'localhost:4000' }]);
      const first = route({ routes });
      await store().cluster.upsertRoute(first);
      assert.deepEqual(await liveFor(first.hostname, 0), first);
      const { routes: _gone, ...bare } = first;
      await store().cluster.upsertRoute(bare);
      assert.deepEqual(await store().cluster.routesFor(first.hostname), [bare]);
    });

    it('renewal extends only the node own leases; the reaper deletes expired ones and names their nodes', async () => {
      const nodeId = `node-${unique()}`;
      const mine = [route({ nodeId, expiresAt: 1_000 }), route({ nodeId, expiresAt: 1_000 })];
      const other = route({ expiresAt: 1_000 });
      for (const r of [...mine, other]) await store().cluster.upsertRoute(r);
      assert.equal(await store().cluster.renewRoutes(nodeId, 5_000), 2);
      assert.equal((await liveFor(mine[0]!.hostname, 4_000))?.expiresAt, 5_000);
      assert.equal(await liveFor(other.hostname, 4_000), undefined);
      const reaped = await store().cluster.reapRoutes(4_000);
      assert.ok(reaped.includes(other.nodeId));
      assert.ok(!reaped.includes(nodeId));
      assert.equal(
        (await store().cluster.liveRoutes(0)).find((r) => r.hostname === other.hostname),
        undefined,
      );
      await store().cluster.deleteNode(nodeId);
      assert.equal(await liveFor(mine[1]!.hostname, 0), undefined);
    });
  });
}
