import type { Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// A tunnel's routes (one hostname, several local services by path) beside the tunnel and its
// cluster claim. Same rules as migrations.ts: Kysely's schema builder only, never edit a shipped
// migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const ROUTES_MIGRATIONS: readonly NamedMigration[] = [
  {
    // `routes`: the routes of the last bind as JSON (`[{"path":"/api","local":"localhost:4000"}]`),
    // null without any. The tunnels row keeps them for the API, the same from every node; the
    // cluster route carries them to the other nodes, which name the route's target in the records
    // and 502 pages of the requests they relay. A rebuild of either table after this one must keep
    // the column.
    name: '022_routes',
    async up(db: Kysely<any>) {
      await db.schema.alterTable('tunnels').addColumn('routes', 'text').execute();
      await db.schema.alterTable('cluster_routes').addColumn('routes', 'text').execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable('cluster_routes').dropColumn('routes').execute();
      await db.schema.alterTable('tunnels').dropColumn('routes').execute();
    },
  },
];
