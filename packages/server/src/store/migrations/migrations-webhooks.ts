import { sql, type Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// Signed webhooks (012): the receivers an account registered, and an outbox of events and their
// deliveries that survives a restart. Same rules as migrations.ts: Kysely's schema builder only,
// never edit a shipped migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const WEBHOOK_MIGRATIONS: readonly NamedMigration[] = [
  {
    // `secret` holds the signing secret sealed with AES-256-GCM (webhooks/secret-box.ts), never
    // in clear: it must be read back to sign, so it cannot be a hash like a token. An event row is
    // written once per cluster (`dedupe_key` is unique where an event must happen only once, such
    // as a usage threshold per month); a delivery is one event for one webhook, claimed by one node
    // at a time through `lease_node`/`lease_until`; an attempt is one HTTP request of a delivery.
    name: '012_webhooks',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('webhooks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('events', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhooks_account_id_idx').on('webhooks').column('account_id').execute();

      await db.schema
        .createTable('webhook_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('dedupe_key', 'text', (c) => c.unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_events_created_at_idx').on('webhook_events').column('created_at').execute();

      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
        .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'delivered', 'failed')`))
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('lease_node', 'text')
        .addColumn('lease_until', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      // The dispatchers' poll: pending rows by due time.
      await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
      await db.schema
        .createIndex('webhook_deliveries_webhook_idx')
        .on('webhook_deliveries')
        .columns(['webhook_id', 'created_at'])
        .execute();
      await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute();

      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
        .addColumn('attempted_at', 'bigint', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('node_id', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').column('delivery_id').execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('webhook_attempts').execute();
      await db.schema.dropTable('webhook_deliveries').execute();
      await db.schema.dropTable('webhook_events').execute();
      await db.schema.dropTable('webhooks').execute();
    },
  },
];
/* eslint-enable @typescript-eslint/no-explicit-any */
