import type { Insertable, Kysely, Selectable } from 'kysely';
import type { ClusterNode, ClusterRepo, ClusterRoute } from './cluster-records.js';
import type { ClusterNodesTable, ClusterRoutesTable, Database } from './schema.js';

/** The cluster tables over a Kysely database (either engine; only PostgreSQL nodes use them). */
export function createClusterRepo(db: Kysely<Database>): ClusterRepo {
  return {
    async upsertNode(node) {
      const row: ClusterNodesTable = {
        node_id: node.nodeId,
        url: node.url,
        started_at: node.startedAt,
        heartbeat_at: node.heartbeatAt,
        sessions: node.sessions,
        tunnels: node.tunnels,
      };
      await db
        .insertInto('cluster_nodes')
        .values(row)
        .onConflict((oc) =>
          oc.column('node_id').doUpdateSet({
            url: row.url,
            started_at: row.started_at,
            heartbeat_at: row.heartbeat_at,
            sessions: row.sessions,
            tunnels: row.tunnels,
          }),
        )
        .execute();
    },

    async listNodes() {
      const rows = await db.selectFrom('cluster_nodes').selectAll().orderBy('node_id').execute();
      return rows.map(nodeFromRow);
    },

    async deleteNode(nodeId) {
      await db.deleteFrom('cluster_routes').where('node_id', '=', nodeId).execute();
      await db.deleteFrom('cluster_nodes').where('node_id', '=', nodeId).execute();
    },

    async upsertRoute(route) {
      const row: Insertable<ClusterRoutesTable> = {
        hostname: route.hostname,
        node_id: route.nodeId,
        tunnel_id: route.tunnelId,
        account_id: route.accountId,
        local_addr: route.localAddr,
        expires_at: route.expiresAt,
        agent_group: route.group,
        claimed_at: route.claimedAt,
        proto: route.proto ?? 'http',
        routes: route.routes ?? null,
      };
      await db
        .insertInto('cluster_routes')
        .values(row)
        .onConflict((oc) =>
          oc.columns(['hostname', 'node_id']).doUpdateSet({
            tunnel_id: row.tunnel_id,
            account_id: row.account_id,
            local_addr: row.local_addr,
            expires_at: row.expires_at,
            agent_group: row.agent_group,
            claimed_at: row.claimed_at,
            proto: row.proto,
            routes: row.routes,
          }),
        )
        .execute();
    },

    async routesFor(hostname) {
      const rows = await db.selectFrom('cluster_routes').selectAll().where('hostname', '=', hostname).execute();
      return rows.map(routeFromRow);
    },

    async deleteRoute(hostname, nodeId) {
      const result = await db
        .deleteFrom('cluster_routes')
        .where('hostname', '=', hostname)
        .where('node_id', '=', nodeId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async renewRoutes(nodeId, expiresAt) {
      const result = await db.updateTable('cluster_routes').set({ expires_at: expiresAt }).where('node_id', '=', nodeId).executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async liveRoutes(now) {
      const rows = await db.selectFrom('cluster_routes').selectAll().where('expires_at', '>', now).execute();
      return rows.map(routeFromRow);
    },

    async reapRoutes(before) {
      const rows = await db.deleteFrom('cluster_routes').where('expires_at', '<', before).returning('node_id').execute();
      return [...new Set(rows.map((row) => row.node_id))];
    },
  };
}

function nodeFromRow(row: ClusterNodesTable): ClusterNode {
  return {
    nodeId: row.node_id,
    url: row.url,
    startedAt: Number(row.started_at),
    heartbeatAt: Number(row.heartbeat_at),
    sessions: Number(row.sessions),
    tunnels: Number(row.tunnels),
  };
}

function routeFromRow(row: Selectable<ClusterRoutesTable>): ClusterRoute {
  return {
    hostname: row.hostname,
    nodeId: row.node_id,
    tunnelId: row.tunnel_id,
    accountId: row.account_id,
    localAddr: row.local_addr,
    expiresAt: Number(row.expires_at),
    group: row.agent_group,
    claimedAt: Number(row.claimed_at),
    ...(row.proto === 'tls' ? { proto: 'tls' as const } : {}),
    ...(row.routes ? { routes: row.routes } : {}),
  };
}
