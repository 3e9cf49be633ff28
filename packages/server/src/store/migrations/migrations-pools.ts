import { sql, type Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// Pools (several tunnels of one account on one hostname), apart from the other migrations so that
// each file stays readable. Same rules as migrations.ts: never edit a shipped migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const POOLS_MIGRATIONS: readonly NamedMigration[] = [
  {
    // A pooled name has one row per member: `pool_member` is '' for a tunnel of its own and the
    // member's tunnel id in a pool, and the hostname is unique together with it. The column-level
    // UNIQUE on hostname (001) cannot be dropped in SQLite, so the table is rebuilt on both engines.
    name: '016_pools',
    async up(db: Kysely<any>) {
      await rebuildTunnels(db, true);
    },
    async down(db: Kysely<any>) {
      await db.deleteFrom('tunnels').where('pool_member', '<>', '').execute();
      await rebuildTunnels(db, false);
    },
  },
];

/** Copies `tunnels` into a new table with (pooled) or without the pool column, and swaps them. */
async function rebuildTunnels(db: Kysely<any>, pooled: boolean): Promise<void> {
  let table = db.schema
    .createTable('tunnels_next')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('hostname', 'text', (c) => (pooled ? c.notNull() : c.notNull().unique()))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('online', 'offline')`))
    .addColumn('pinned', 'integer', (c) => c.notNull().check(sql`pinned in (0, 1)`))
    .addColumn('local_addr', 'text', (c) => c.notNull())
    .addColumn('agent_version', 'text', (c) => c.notNull())
    .addColumn('agent_ip', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('policy', 'text');
  if (pooled) table = table.addColumn('pool_member', 'text', (c) => c.notNull().defaultTo(''));
  await table.execute();
  const columns = ['id', 'account_id', 'hostname', 'status', 'pinned', 'local_addr', 'agent_version', 'agent_ip', 'node_id'];
  const all = [...columns, 'created_at', 'updated_at', 'policy'];
  await db.insertInto('tunnels_next').columns(all).expression(db.selectFrom('tunnels').select(all)).execute();
  await db.schema.dropTable('tunnels').execute();
  await db.schema.alterTable('tunnels_next').renameTo('tunnels').execute();
  await db.schema.createIndex('tunnels_account_id_idx').on('tunnels').column('account_id').execute();
  await db.schema.createIndex('tunnels_node_id_status_idx').on('tunnels').columns(['node_id', 'status']).execute();
  if (pooled)
    await db.schema.createIndex('tunnels_hostname_member_uq').on('tunnels').columns(['hostname', 'pool_member']).unique().execute();
}
