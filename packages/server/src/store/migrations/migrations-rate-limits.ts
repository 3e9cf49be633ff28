import type { Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// Rate limits counted in the shared store, so the nodes of a cluster enforce one limit together.
// Same rules as migrations.ts: never edit a shipped migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const RATE_LIMIT_MIGRATIONS: readonly NamedMigration[] = [
  {
    // One row per limited key (window length, tunnel host and visitor address): the requests it
    // was allowed in the current fixed window and in the one before, from which the sliding
    // window's count is estimated. Rows are rewritten in place by one upsert per request, and
    // swept once both windows have passed (`expires_at`).
    name: '019_rate_limits',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('rate_limits')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('window_index', 'bigint', (c) => c.notNull())
        .addColumn('in_window', 'bigint', (c) => c.notNull())
        .addColumn('in_previous', 'bigint', (c) => c.notNull())
        .addColumn('allowed', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('rate_limits_expires_at_idx').on('rate_limits').column('expires_at').execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('rate_limits').execute();
    },
  },
];
