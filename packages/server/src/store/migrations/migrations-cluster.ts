import type { Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// Several edge nodes on one database (007–009), apart from the single-node migrations so that
// each file stays readable. Same rules as migrations.ts: Kysely's schema builder only, never
// edit a shipped migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const CLUSTER_MIGRATIONS: readonly NamedMigration[] = [
  {
    // Several edge nodes on one database: the nodes with their heartbeats and internal URLs, and
    // where each live hostname's agent is held, leased by the holder (cluster/). SQLite gets the
    // tables too, so both engines keep one schema; only PostgreSQL nodes use them.
    name: '007_cluster_nodes_routes',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('cluster_nodes')
        .addColumn('node_id', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
        .addColumn('sessions', 'integer', (c) => c.notNull())
        .addColumn('tunnels', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('cluster_routes')
        .addColumn('hostname', 'text', (c) => c.primaryKey())
        .addColumn('node_id', 'text', (c) => c.notNull())
        .addColumn('tunnel_id', 'text', (c) => c.notNull())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('local_addr', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      // Renewal and goodbye address a node's rows; the reaper finds expired ones.
      await db.schema.createIndex('cluster_routes_node_id_idx').on('cluster_routes').column('node_id').execute();
      await db.schema.createIndex('cluster_routes_expires_at_idx').on('cluster_routes').column('expires_at').execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('cluster_routes').execute();
      await db.schema.dropTable('cluster_nodes').execute();
    },
  },
  {
    // An agent may hold one hostname on two nodes at once (SVC_SERVER with several URLs), so a
    // route is one node's claim on a hostname: keyed by both. `agent_group` tells a second
    // connection of the same agent (kept beside the first) from another agent taking the name
    // over; `claimed_at` decides a takeover between nodes. Routes are leases a few seconds
    // long, so the table is recreated rather than converted: nodes claim theirs again.
    name: '008_cluster_routes_per_node',
    async up(db: Kysely<any>) {
      await db.schema.dropTable('cluster_routes').execute();
      await createClusterRoutes(db, true);
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('cluster_routes').execute();
      await createClusterRoutes(db, false);
    },
  },
  {
    // Several edge nodes order certificates: the CA may fetch an HTTP-01 answer from any node,
    // so pending answers are shared, and a lease per hostname lets one node order while the
    // others wait for its certificate. SQLite gets the tables too, so both engines keep one
    // schema; a single node keeps its answers in memory.
    name: '009_acme_shared_challenges',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('acme_challenges')
        .addColumn('token', 'text', (c) => c.primaryKey())
        .addColumn('key_authorization', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('acme_challenges_expires_at_idx').on('acme_challenges').column('expires_at').execute();
      await db.schema
        .createTable('acme_order_leases')
        .addColumn('host', 'text', (c) => c.primaryKey())
        .addColumn('node_id', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('acme_order_leases').execute();
      await db.schema.dropTable('acme_challenges').execute();
    },
  },
];

/** The route table of migration 007 (`perNode` false) or 008. */
async function createClusterRoutes(db: Kysely<any>, perNode: boolean): Promise<void> {
  let table = db.schema
    .createTable('cluster_routes')
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('tunnel_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('local_addr', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull());
  table = perNode
    ? table
        .addColumn('agent_group', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('claimed_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('cluster_routes_pk', ['hostname', 'node_id'])
    : table.addPrimaryKeyConstraint('cluster_routes_pkey', ['hostname']);
  await table.execute();
  await db.schema.createIndex('cluster_routes_node_id_idx').on('cluster_routes').column('node_id').execute();
  await db.schema.createIndex('cluster_routes_expires_at_idx').on('cluster_routes').column('expires_at').execute();
}
