import type { Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// Single sign-on (013): the keys every node signs with, and one-time tickets of the sign-in.
// Same rules as migrations.ts: Kysely's schema builder only, never edit a shipped migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const OIDC_MIGRATIONS: readonly NamedMigration[] = [
  {
    // `oidc_keys`: one row per key purpose (the ES256 key of X-Svc-Identity, the HMAC key of session
    // cookies), written once by whichever node starts first and read by every node, so a cookie or a
    // token made on one node is good on all. `oidc_tickets`: a sign-in in progress (keyed by its
    // state) and the one-time code that hands the browser back to the tunnel host; the id is the
    // SHA-256 of the random value, taking one is a DELETE … RETURNING, so it is used at most once.
    name: '013_oidc',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('oidc_keys')
        .addColumn('purpose', 'text', (c) => c.primaryKey())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('oidc_tickets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('oidc_tickets_expires_at_idx').on('oidc_tickets').column('expires_at').execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('oidc_tickets').execute();
      await db.schema.dropTable('oidc_keys').execute();
    },
  },
];
