import type { Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// Single sign-on (018): sessions ended before their time, and the signing keys of X-Svc-Identity
// as a schedule of several keys. Same rules as migrations.ts: Kysely's schema builder only, never
// edit a shipped migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const OIDC_SESSIONS_MIGRATIONS: readonly NamedMigration[] = [
  {
    // `oidc_revocations`: one row per session signed out at /.svc/logout, kept until the session
    // would have expired anyway (`expires_at`); every node polls the rows written since its last
    // look (`revoked_at`) and refuses those sessions. `oidc_signing_keys`: the ES256 keys of
    // X-Svc-Identity, the private key sealed (AES-256-GCM) with the node's secret key; a key is
    // published from the moment it is stored and signed with from `active_at`, so every node and
    // every verifier has it before the first token carries its kid.
    name: '018_oidc_sessions',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('oidc_revocations')
        .addColumn('session_id', 'text', (c) => c.primaryKey())
        .addColumn('revoked_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('oidc_revocations_revoked_at_idx').on('oidc_revocations').column('revoked_at').execute();
      await db.schema.createIndex('oidc_revocations_expires_at_idx').on('oidc_revocations').column('expires_at').execute();
      await db.schema
        .createTable('oidc_signing_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('sealed_key', 'text', (c) => c.notNull())
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('active_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('oidc_signing_keys').execute();
      await db.schema.dropTable('oidc_revocations').execute();
    },
  },
];
