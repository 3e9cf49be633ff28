import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { createAccountRepo } from './accounts-repo.js';
import { createClusterRepo } from './cluster-repo.js';
import { createKeyRepo } from './keys-repo.js';
import { migrateToLatest } from './migrations.js';
import { StorePostgresDialect } from './postgres-schema-dialect.js';
import type { Database } from './schema.js';
import type { Store } from './store.js';
import { createTunnelRepo } from './tunnels-repo.js';
import { createTcpAddressRepo } from './tcp-addresses-repo.js';
import { createRequestRepo } from './requests/requests-repo.js';
import { createPagedRequestRepo } from './requests/paged-requests-repo.js';
import { createUsageRepo } from './usage-repo.js';
import { createAcmeAccountRepo, createCertificateRepo } from './certificates-repo.js';
import { createDomainRepo } from './domains-repo.js';
import { createAcmeSharedRepo } from './acme-shared-repo.js';
import { createDashboardSessionRepo, createSignInLinkRepo } from './sign-in-repo.js';
import { createOidcRepo } from './oidc-repo.js';
import { createWebhookRepo } from './webhooks-repo.js';
import { StatementCachingDatabase } from './sqlite-statement-cache.js';
import { applyConnectionPragmas, openSqliteConnection, SQLITE_BUSY_TIMEOUT_MS } from './sqlite-connection.js';
import { SqliteRequestWriter } from './requests/sqlite-request-writer.js';
import { BusyRetrySqliteDialect } from './sqlite-busy-retry.js';

// This is the only file that chooses the engine; everything it runs beyond
// plain Kysely queries (pragmas, BEGIN IMMEDIATE, type parsers, the SQLite
// inspector writer thread) is engine-specific on purpose.

/** Name of the SQLite database file inside the data dir. */
export const SQLITE_FILE = 'svc.sqlite';
/** Pause between attempts to switch a contended fresh file to WAL. */
const WAL_RETRY_MS = 20;
/** Connections per process to PostgreSQL. */
const PG_POOL_MAX = 10;

export interface OpenStoreOptions {
  /** `postgres://` or `postgresql://` selects PostgreSQL; anything else (or unset) selects SQLite. */
  databaseUrl?: string | undefined;
  /** Holds `svc.sqlite` when SQLite is used; created if missing. */
  dataDir: string;
  /** Clock for createdAt/updatedAt; tests pass a ticking fake. Default Date.now. */
  now?: () => number;
  /** Receives errors of idle PostgreSQL connections (the next query fails too). Default: ignored. */
  onPoolError?: (err: Error) => void;
}

/** True for the URLs that select the PostgreSQL engine. */
export function isPostgresUrl(url: string | undefined): url is string {
  return url !== undefined && /^postgres(ql)?:\/\//i.test(url);
}

/** Opens the store (PostgreSQL or SQLite, per options) and applies pending migrations. */
export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  const now = opts.now ?? Date.now;
  const { db, writer } = isPostgresUrl(opts.databaseUrl)
    ? { db: await openPostgres(opts.databaseUrl, opts.onPoolError ?? (() => {})), writer: undefined }
    : await openSqlite(opts.dataDir);
  return {
    accounts: createAccountRepo(db, now),
    keys: createKeyRepo(db, now),
    tunnels: createTunnelRepo(db, now),
    // SQLite stores inspector records as pages through the writer thread; PostgreSQL as rows.
    requests: writer ? createPagedRequestRepo(db, { writer }) : createRequestRepo(db),
    usage: createUsageRepo(db, now),
    domains: createDomainRepo(db, now),
    certificates: createCertificateRepo(db),
    acme: createAcmeAccountRepo(db),
    acmeShared: createAcmeSharedRepo(db),
    sessions: createDashboardSessionRepo(db, now),
    signInLinks: createSignInLinkRepo(db, now),
    cluster: createClusterRepo(db),
    webhooks: createWebhookRepo(db, now),
    tcpAddresses: createTcpAddressRepo(db, now),
    oidc: createOidcRepo(db, now),
    close: async () => {
      try {
        // First: it waits for the inspector batches in flight.
        await writer?.close();
      } finally {
        await db.destroy();
      }
    },
  };
}

async function openSqlite(dataDir: string): Promise<{ db: Kysely<Database>; writer: SqliteRequestWriter }> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, SQLITE_FILE);
  const raw = openSqliteConnection(file);
  let db: Kysely<Database> | undefined;
  try {
    // Why WAL: see applyConnectionPragmas.
    await enableWal(raw);
    applyConnectionPragmas(raw);
    // Kysely prepares every query anew; the wrapper reuses prepared statements (see its notes).
    const database = new StatementCachingDatabase(raw);
    // Waits for a foreign write lock on timers, not inside SQLite (see sqlite-busy-retry.ts).
    db = new Kysely<Database>({ dialect: new BusyRetrySqliteDialect({ database }, { budgetMs: SQLITE_BUSY_TIMEOUT_MS }) });
    // Kysely runs SQLite migrations outside any transaction (its adapter
    // claims no transactional DDL), so two processes opening a fresh file
    // would both run 001. BEGIN IMMEDIATE takes the write lock up front,
    // waiting up to busy_timeout; the later process then finds 001 recorded.
    // Kysely's SQLite driver uses this same single connection, so the
    // migrator's statements run inside this transaction.
    raw.exec('BEGIN IMMEDIATE');
    try {
      await migrateToLatest(db);
      raw.exec('COMMIT');
    } finally {
      if (raw.inTransaction) raw.exec('ROLLBACK');
    }
    // From here on SQLite itself never waits on this connection: a wait inside better-sqlite3
    // would stop the event loop, so the dialect above retries on timers instead.
    raw.pragma('busy_timeout = 0');
    // Inspector pages are written by a worker thread on its own connection, off the event loop
    // (see request-writer-thread.ts). Its thread starts with the first batch: the table exists now.
    return { db, writer: new SqliteRequestWriter({ file }) };
  } catch (err) {
    if (db) await db.destroy();
    else raw.close();
    throw err;
  }
}

// Switching a fresh file to WAL upgrades a read lock to a write lock. When
// two processes do that at once SQLite answers SQLITE_BUSY at once instead of
// calling the busy handler (waiting could deadlock), so retry here, for as
// long as busy_timeout would have waited. Once the file is in WAL mode (the
// mode is persistent) the pragma is a no-op and never contends.
async function enableWal(raw: BetterSqlite3.Database): Promise<void> {
  const deadline = Date.now() + SQLITE_BUSY_TIMEOUT_MS;
  for (;;) {
    let mode: unknown;
    try {
      mode = raw.pragma('journal_mode = WAL', { simple: true });
    } catch (err) {
      const busy = err instanceof BetterSqlite3.SqliteError && err.code === 'SQLITE_BUSY';
      if (!busy || Date.now() >= deadline) throw err;
      await delay(WAL_RETRY_MS);
      continue;
    }
    // Some filesystems (network mounts) cannot do WAL; two processes would then block each other.
    if (mode !== 'wal') throw new Error(`SQLite could not switch to WAL mode (journal_mode is ${String(mode)})`);
    return;
  }
}

async function openPostgres(url: string, onPoolError: (err: Error) => void): Promise<Kysely<Database>> {
  // pg returns int8 (bigint, our ms timestamps and counts) as strings by
  // default. Every value we store stays far below 2^53, so Number is exact.
  // The parser is process-wide; nothing else in the server relies on strings.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));
  const pool = new pg.Pool({ connectionString: url, max: PG_POOL_MAX });
  // Without a listener, an idle connection dropped by the server would crash the process.
  pool.on('error', onPoolError);
  // The pool listens only to idle clients. A client checked out with no query on the wire (a
  // transaction between two statements) that PostgreSQL drops (57P01 on a fast shutdown)
  // emits 'error' itself, and unheard that crashed the server on every database restart under
  // traffic. Heard here, the client is marked unqueryable: the statement that follows fails
  // as a store fault (503, batch kept) and the pool discards the client on release.
  pool.on('connect', (client) => client.on('error', onPoolError));
  const db = new Kysely<Database>({ dialect: new StorePostgresDialect({ pool }) });
  try {
    // Tables go to the first schema of the search_path (`public` unless the
    // URL says otherwise, e.g. `?options=-c search_path=svc`).
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
    const schema = rows[0]?.schema;
    if (!schema) throw new Error('PostgreSQL has no current schema: the search_path names no existing schema');
    // Kysely's PostgreSQL adapter holds an advisory lock while migrating, so
    // several nodes starting together apply each migration once; the dialect's
    // introspection reads this schema only, so DDL elsewhere in the database
    // cannot fail the start (postgres-schema-dialect.ts).
    await migrateToLatest(db, schema);
    return db;
  } catch (err) {
    await db.destroy();
    throw err;
  }
}
