import type { Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// TLS passthrough tunnels (017), apart from the other migrations so that each file stays readable.
// Same rules as migrations.ts: Kysely's schema builder only, never edit a shipped migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const TLS_MIGRATIONS: readonly NamedMigration[] = [
  {
    // What a tunnel carries: 'http', 'tcp' or 'tls'. The tunnels row says so for the API and the
    // certificate issuer (no certificate is ever issued for a 'tls' name); the cluster route says
    // so for the other nodes, which read SNI on their HTTPS port only while some route is 'tls'
    // and send those visitors' raw connections to the node holding the agent. A rebuild of
    // `tunnels` after this one must keep the column.
    name: '017_tls',
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('tunnels')
        .addColumn('proto', 'text', (c) => c.notNull().defaultTo('http'))
        .execute();
      await db.schema
        .alterTable('cluster_routes')
        .addColumn('proto', 'text', (c) => c.notNull().defaultTo('http'))
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable('cluster_routes').dropColumn('proto').execute();
      await db.schema.alterTable('tunnels').dropColumn('proto').execute();
    },
  },
];
