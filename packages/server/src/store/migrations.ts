import { Migrator, sql, type Kysely, type Migration } from 'kysely';

// Migrations are written with Kysely's schema builder only, so the same code
// creates the same tables on SQLite and PostgreSQL. Column types are chosen to
// mean the same on both: `bigint` is an 8-byte integer in PostgreSQL and has
// INTEGER affinity in SQLite. Never edit a shipped migration; add a new one.

interface NamedMigration extends Migration {
  /** Sort order is the name's order, so names start with a zero-padded number. */
  name: string;
}

// Kysely<any> is what the Migrator hands over: migrations must not depend on
// today's schema types, which describe the latest schema, not theirs.
/* eslint-disable @typescript-eslint/no-explicit-any */
const MIGRATIONS: readonly NamedMigration[] = [
  {
    name: '001_accounts_keys_tunnels',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('plan', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_account_id_idx').on('api_keys').column('account_id').execute();

      await db.schema
        .createTable('tunnels')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('hostname', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('online', 'offline')`))
        .addColumn('pinned', 'integer', (c) => c.notNull().check(sql`pinned in (0, 1)`))
        .addColumn('local_addr', 'text', (c) => c.notNull())
        .addColumn('agent_version', 'text', (c) => c.notNull())
        .addColumn('agent_ip', 'text', (c) => c.notNull())
        .addColumn('node_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tunnels_account_id_idx').on('tunnels').column('account_id').execute();
      // markAllOfflineForNode runs at every start and filters on both columns.
      await db.schema.createIndex('tunnels_node_id_status_idx').on('tunnels').columns(['node_id', 'status']).execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('tunnels').execute();
      await db.schema.dropTable('api_keys').execute();
      await db.schema.dropTable('accounts').execute();
    },
  },
];

/**
 * Applies every pending migration, in name order; throws the first failure.
 * `schema` pins Kysely's bookkeeping tables to the schema the tables are
 * created in (PostgreSQL): without it Kysely looks for them in every schema of
 * the database and can mistake another schema's for ours.
 */
export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => Object.fromEntries(MIGRATIONS.map((m) => [m.name, m])) },
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  const { error } = await migrator.migrateToLatest();
  if (error !== undefined) throw error instanceof Error ? error : new Error(`migration failed: ${String(error)}`);
}
/* eslint-enable @typescript-eslint/no-explicit-any */
