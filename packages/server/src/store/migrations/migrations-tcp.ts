import { sql, type Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// TCP tunnels (010), apart from the other migrations so that each file stays readable. Same
// rules as migrations.ts: Kysely's schema builder only, never edit a shipped migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const TCP_MIGRATIONS: readonly NamedMigration[] = [
  {
    // One row per edge port in use by a TCP tunnel or reserved by an account. The primary key on
    // the port is what keeps two nodes (or two binds) from handing out one port twice. A lease
    // (reserved = 0) is a running agent's: held_until is null while it is bound, and the time
    // until which it stays its account's after the agent's connection was lost (then anyone's).
    name: '010_tcp_addresses',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tcp_addresses')
        .addColumn('port', 'integer', (c) => c.primaryKey())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('reserved', 'integer', (c) => c.notNull().check(sql`reserved in (0, 1)`))
        .addColumn('node_id', 'text', (c) => c.notNull())
        .addColumn('held_until', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      // Reservations are listed and counted per account.
      await db.schema.createIndex('tcp_addresses_account_id_idx').on('tcp_addresses').columns(['account_id', 'reserved']).execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('tcp_addresses').execute();
    },
  },
];
