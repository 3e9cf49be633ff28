import { Migrator, SqliteAdapter, sql, type CreateTableBuilder, type Kysely } from 'kysely';
import { DecodedPage, pageFromRecords, type StoredPage } from '../requests/request-pages.js';
import { fromRow, toRow } from '../requests/request-rows.js';
import { CLUSTER_MIGRATIONS } from './migrations-cluster.js';
import { OIDC_MIGRATIONS } from './migrations-oidc.js';
import { OIDC_SESSIONS_MIGRATIONS } from './migrations-oidc-sessions.js';
import { OIDC_SEALED_KEYS_MIGRATIONS } from './migrations-oidc-sealed-keys.js';
import { POOLS_MIGRATIONS } from './migrations-pools.js';
import { RATE_LIMIT_MIGRATIONS } from './migrations-rate-limits.js';
import { REQUEST_TARGET_MIGRATIONS } from './migrations-request-target.js';
import { ROUTES_MIGRATIONS } from './migrations-routes.js';
import { TCP_MIGRATIONS } from './migrations-tcp.js';
import { TLS_MIGRATIONS } from './migrations-tls.js';
import { TUNNEL_POLICY_MIGRATIONS } from './migrations-tunnel-policy.js';
import { WEBHOOK_MIGRATIONS } from './migrations-webhooks.js';
import type { NamedMigration } from './named-migration.js';
import type { RequestsTable } from '../schema.js';

// Migrations are written with Kysely's schema builder only, so the same code
// creates the same tables on SQLite and PostgreSQL. Column types are chosen to
// mean the same on both: `bigint` is an 8-byte integer in PostgreSQL and has
// INTEGER affinity in SQLite. Never edit a shipped migration; add a new one.

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
  {
    // Inspector records and metered usage. No foreign keys to accounts on purpose: these
    // rows are written in bulk off the request path, and one vanished account must not
    // fail (and, for usage, endlessly retry) a whole batch. Deleting an account must
    // delete its rows here explicitly.
    name: '002_requests_and_usage',
    async up(db: Kysely<any>) {
      await createRequestsTable(db, 'requests', 'by-id').execute();
      // The listing (newest first, cursor on timestamp+id) and the per-account cap walk this index.
      await db.schema
        .createIndex('requests_account_time_idx')
        .on('requests')
        .columns(['account_id', 'timestamp desc', 'id desc'])
        .execute();
      // Retention by age deletes across accounts.
      await db.schema.createIndex('requests_timestamp_idx').on('requests').column('timestamp').execute();

      await db.schema
        .createTable('usage_monthly')
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_monthly_pk', ['account_id', 'month'])
        .execute();
      await db.schema
        .createTable('usage_daily')
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('bytes', 'bigint', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addColumn('peak_tunnels', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_daily_pk', ['account_id', 'day'])
        .execute();
      // Ids of applied usage flushes: a retried flush whose first commit did succeed is
      // recognised and not applied twice. Pruned by age.
      await db.schema
        .createTable('usage_flushes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('applied_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('usage_flushes_applied_at_idx').on('usage_flushes').column('applied_at').execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('usage_flushes').execute();
      await db.schema.dropTable('usage_daily').execute();
      await db.schema.dropTable('usage_monthly').execute();
      await db.schema.dropTable('requests').execute();
    },
  },
  {
    name: '003_domains_and_certificates',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('domains')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('host', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'verified')`))
        .addColumn('txt_value', 'text', (c) => c.notNull())
        .addColumn('verified_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('cert_state', 'text', (c) =>
          c
            .notNull()
            .defaultTo('none')
            .check(sql`cert_state in ('none', 'pending', 'issued', 'failed')`),
        )
        .addColumn('cert_error', 'text')
        .addColumn('cert_expires_at', 'bigint')
        .execute();
      // One row per host per account; other accounts may hold the host pending.
      await db.schema.createIndex('domains_account_host_uq').on('domains').columns(['account_id', 'host']).unique().execute();
      // A host is verified on at most one account. Both engines support partial
      // unique indexes; the value is a literal because DDL takes no parameters.
      await db.schema
        .createIndex('domains_verified_host_uq')
        .on('domains')
        .column('host')
        .unique()
        .where(sql.ref('state'), '=', sql.lit('verified'))
        .execute();
      await db.schema.createIndex('domains_host_idx').on('domains').column('host').execute();

      await db.schema
        .createTable('certificates')
        .addColumn('host', 'text', (c) => c.primaryKey())
        .addColumn('cert_pem', 'text', (c) => c.notNull())
        .addColumn('key_pem', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('issued_at', 'bigint', (c) => c.notNull())
        .execute();
      // The renewal loop scans by expiry.
      await db.schema.createIndex('certificates_expires_at_idx').on('certificates').column('expires_at').execute();

      await db.schema
        .createTable('acme_account')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('key_pem', 'text', (c) => c.notNull())
        .addColumn('url', 'text')
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('acme_account').execute();
      await db.schema.dropTable('certificates').execute();
      await db.schema.dropTable('domains').execute();
    },
  },
  {
    // Inspector records clustered by (account_id, timestamp, id), the order every reader and
    // retention walk, in place of a table keyed by id with two secondary indexes. On SQLite the
    // table is WITHOUT ROWID, so each insert writes one B-tree instead of four: measured at
    // ~400k rows, 3.8 against 5.1-6.0 µs per row, and the file less than half the size (the
    // inspector's writer thread inserts one row per proxied request). Ids stay unique (ms +
    // 64 more bits) but nothing looks a record up by id alone. Retention by age now walks
    // account by account on the same key, so the timestamp index goes too.
    name: '004_requests_clustered',
    async up(db: Kysely<any>) {
      await createRequestsTable(db, 'requests_clustered', 'clustered').execute();
      await db
        .insertInto('requests_clustered')
        .columns(REQUEST_COLUMN_NAMES)
        .expression(db.selectFrom('requests').select(REQUEST_COLUMN_NAMES))
        .execute();
      await db.schema.dropTable('requests').execute();
      await db.schema.alterTable('requests_clustered').renameTo('requests').execute();
    },
    async down(db: Kysely<any>) {
      await createRequestsTable(db, 'requests_by_id', 'by-id').execute();
      await db
        .insertInto('requests_by_id')
        .columns(REQUEST_COLUMN_NAMES)
        .expression(db.selectFrom('requests').select(REQUEST_COLUMN_NAMES))
        .execute();
      await db.schema.dropTable('requests').execute();
      await db.schema.alterTable('requests_by_id').renameTo('requests').execute();
      await db.schema
        .createIndex('requests_account_time_idx')
        .on('requests')
        .columns(['account_id', 'timestamp desc', 'id desc'])
        .execute();
      await db.schema.createIndex('requests_timestamp_idx').on('requests').column('timestamp').execute();
    },
  },
  {
    // Inspector records on SQLite as pages (request-pages.ts): one row per account per written
    // batch instead of one per record, because the row per record was the largest share of
    // the edge's CPU the inspector took (its writer thread: ~6 µs per proxied request, of
    // which SQLite's per-row work is ~3). PostgreSQL keeps `requests`: its driver is
    // asynchronous, off the edge's thread, and it serves several edges at once.
    // Existing rows are converted with today's page encoder; every page records its `format`,
    // so a later layout can still tell these pages apart.
    name: '005_request_pages',
    async up(db: Kysely<any>) {
      if (!isSqlite(db)) return;
      await db.schema
        .createTable('request_pages')
        .addColumn('page_id', 'integer', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('newest_ts', 'bigint', (c) => c.notNull())
        .addColumn('newest_id', 'text', (c) => c.notNull())
        .addColumn('oldest_ts', 'bigint', (c) => c.notNull())
        .addColumn('record_count', 'integer', (c) => c.notNull())
        .addColumn('format', 'integer', (c) => c.notNull())
        .addColumn('strings', 'text', (c) => c.notNull())
        .addColumn('vals', 'blob', (c) => c.notNull())
        .addColumn('id_parts', 'blob', (c) => c.notNull())
        .execute();
      // Readers walk an account's pages newest first; retention finds the pages straddling a
      // time by either end. Both indexes cover what their walks read.
      await db.schema
        .createIndex('request_pages_newest_idx')
        .on('request_pages')
        .columns(['account_id', 'newest_ts', 'newest_id', 'oldest_ts'])
        .execute();
      await db.schema
        .createIndex('request_pages_oldest_idx')
        .on('request_pages')
        .columns(['account_id', 'oldest_ts', 'record_count'])
        .execute();
      await convertRowsToPages(db);
      await db.schema.dropTable('requests').execute();
    },
    async down(db: Kysely<any>) {
      if (!isSqlite(db)) return;
      await createRequestsTable(db, 'requests', 'clustered').execute();
      let after = 0;
      for (;;) {
        const page = await db
          .selectFrom('request_pages')
          .selectAll()
          .where('page_id', '>', after)
          .orderBy('page_id')
          .limit(1)
          .executeTakeFirst();
        if (!page) break;
        // Rows of 004's table, which has no `target` (migration 020, reverted before this runs).
        const rows = new DecodedPage(page as StoredPage).records().map((record) => {
          const { target: _target, ...row } = toRow(record, record.id);
          return row;
        });
        for (let i = 0; i < rows.length; i += CONVERT_ROWS)
          await db
            .insertInto('requests')
            .values(rows.slice(i, i + CONVERT_ROWS))
            .execute();
        after = page.page_id;
      }
      await db.schema.dropTable('request_pages').execute();
    },
  },
  {
    // Dashboard sign-in: a password hash per account (null until one is set), browser sessions
    // and one-time sign-in links. Tokens of both are stored as sha256 hashes only, like agent keys.
    name: '006_dashboard_sign_in',
    async up(db: Kysely<any>) {
      await db.schema.alterTable('accounts').addColumn('password_hash', 'text').execute();
      await db.schema
        .createTable('dashboard_sessions')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      // A password change deletes the account's sessions; the sweep deletes expired ones.
      await db.schema.createIndex('dashboard_sessions_account_id_idx').on('dashboard_sessions').column('account_id').execute();
      await db.schema.createIndex('dashboard_sessions_expires_at_idx').on('dashboard_sessions').column('expires_at').execute();
      await db.schema
        .createTable('sign_in_links')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute();
      await db.schema.createIndex('sign_in_links_expires_at_idx').on('sign_in_links').column('expires_at').execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('sign_in_links').execute();
      await db.schema.dropTable('dashboard_sessions').execute();
      await db.schema.alterTable('accounts').dropColumn('password_hash').execute();
    },
  },
  ...CLUSTER_MIGRATIONS,
  ...TCP_MIGRATIONS,
  ...TUNNEL_POLICY_MIGRATIONS,
  ...WEBHOOK_MIGRATIONS,
  ...OIDC_MIGRATIONS,
  ...POOLS_MIGRATIONS,
  ...TLS_MIGRATIONS,
  ...OIDC_SESSIONS_MIGRATIONS,
  ...RATE_LIMIT_MIGRATIONS,
  ...REQUEST_TARGET_MIGRATIONS,
  ...ROUTES_MIGRATIONS,
  ...OIDC_SEALED_KEYS_MIGRATIONS,
];

/** Rows per statement when migrations convert inspector records: 13 parameters each, far below SQLite's limit. */
const CONVERT_ROWS = 256;

function isSqlite(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter;
}

/** Migration 005: every `requests` row into `request_pages`, a page per account per CONVERT_ROWS rows in key order. */
async function convertRowsToPages(db: Kysely<any>): Promise<void> {
  let after: { account_id: string; timestamp: number; id: string } | undefined;
  for (;;) {
    let query = db.selectFrom('requests').selectAll();
    const from = after;
    if (from)
      query = query.where((eb) =>
        eb(eb.refTuple('account_id', 'timestamp', 'id'), '>', eb.tuple(from.account_id, from.timestamp, from.id)),
      );
    const rows = await query.orderBy('account_id').orderBy('timestamp').orderBy('id').limit(CONVERT_ROWS).execute();
    const records = rows.map((row) => fromRow(row as RequestsTable));
    for (let start = 0; start < records.length;) {
      let end = start + 1;
      while (end < records.length && records[end]!.accountId === records[start]!.accountId) end++;
      await db
        .insertInto('request_pages')
        .values(pageFromRecords(records.slice(start, end)))
        .execute();
      start = end;
    }
    if (rows.length < CONVERT_ROWS) return;
    after = rows.at(-1) as RequestsTable;
  }
}

/** The columns of `requests` as migration 004 found and left them (not today's schema type). */
const REQUEST_COLUMN_NAMES = [
  'id',
  'account_id',
  'tunnel_id',
  'timestamp',
  'method',
  'path',
  'status',
  'duration_ms',
  'bytes',
  'ip',
  'user_agent',
  'proto',
  'host',
];

/** The `requests` table of migration 002 ('by-id') or 004 ('clustered'), under `name`. */
function createRequestsTable(db: Kysely<any>, name: string, layout: 'by-id' | 'clustered'): CreateTableBuilder<string, string> {
  let table = db.schema
    .createTable(name)
    .addColumn('id', 'text', (c) => (layout === 'by-id' ? c.primaryKey() : c.notNull()))
    .addColumn('account_id', 'text', (c) => c.notNull())
    // Null when the tunnel row is unknown; kept as plain text since tunnels get deleted.
    .addColumn('tunnel_id', 'text')
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'bigint', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text', (c) => c.notNull())
    .addColumn('proto', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull());
  if (layout === 'clustered') {
    table = table.addPrimaryKeyConstraint(`${name}_pk`, ['account_id', 'timestamp', 'id']);
    // PostgreSQL tables are heaps whatever the key; SQLite clusters a WITHOUT ROWID table by it.
    if (isSqlite(db)) table = table.modifyEnd(sql`without rowid`);
  }
  return table;
}

/**
 * Applies every pending migration, in name order; throws the first failure.
 * `schema` pins Kysely's bookkeeping tables to the schema the tables are
 * created in (PostgreSQL): without it Kysely looks for them in every schema of
 * the database and can mistake another schema's for ours.
 */
export async function migrateToLatest(db: Kysely<any>, schema?: string): Promise<void> {
  settle(await migrator(db, schema).migrateToLatest());
}

/** Applies (or reverts) migrations up to and including `name`; for tests of a migration's data path. */
export async function migrateTo(db: Kysely<any>, name: string, schema?: string): Promise<void> {
  settle(await migrator(db, schema).migrateTo(name));
}

function migrator(db: Kysely<any>, schema: string | undefined): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => Object.fromEntries(MIGRATIONS.map((m) => [m.name, m])) },
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
}

function settle({ error }: { error?: unknown }): void {
  if (error !== undefined) throw error instanceof Error ? error : new Error(`migration failed: ${String(error)}`);
}
/* eslint-enable @typescript-eslint/no-explicit-any */
