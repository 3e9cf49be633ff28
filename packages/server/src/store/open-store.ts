import { createAccountRepo } from './accounts-repo.js';
import { createAcmeSharedRepo } from './acme-shared-repo.js';
import { createAcmeAccountRepo, createCertificateRepo } from './certificates-repo.js';
import { createClusterRepo } from './cluster-repo.js';
import { createDomainRepo } from './domains-repo.js';
import { openDatabase } from './engine/open-database.js';
import { createKeyRepo } from './keys-repo.js';
import { migrateToLatest } from './migrations/migrations.js';
import { createPagedRequestRepo } from './requests/paged-requests-repo.js';
import { createRequestRepo } from './requests/requests-repo.js';
import { createOidcRepo } from './oidc-repo.js';
import { createRateLimitRepo } from './rate-limits-repo.js';
import { SqliteRequestWriter } from './requests/sqlite-request-writer.js';
import { createDashboardSessionRepo, createSignInLinkRepo } from './sign-in-repo.js';
import type { Store } from './store.js';
import { createTcpAddressRepo } from './tcp-addresses-repo.js';
import { createTunnelRepo } from './tunnels-repo.js';
import { createUsageRepo } from './usage-repo.js';
import { createWebhookRepo } from './webhooks-repo.js';

export { isPostgresUrl, SQLITE_FILE } from './engine/open-database.js';

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

/** Opens the store (PostgreSQL or SQLite, per options) and applies pending migrations. */
export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  const now = opts.now ?? Date.now;
  const { db, sqliteFile } = await openDatabase(opts, migrateToLatest);
  // SQLite's inspector pages are written by a worker thread on its own connection, off the event
  // loop (see request-writer-thread.ts); its thread starts with the first batch.
  const writer = sqliteFile === undefined ? undefined : new SqliteRequestWriter({ file: sqliteFile });
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
    rateLimits: createRateLimitRepo(db),
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
