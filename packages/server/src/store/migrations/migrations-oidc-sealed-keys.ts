import type { Kysely } from 'kysely';
import type { NamedMigration } from './named-migration.js';

// Single sign-on (023): the session cookies' HMAC key sealed at rest, as the identity signing keys
// are since 018. Same rules as migrations.ts: Kysely's schema builder only, never edit a shipped
// migration.

// Kysely<any>: migrations must not depend on today's schema types.
/* eslint-disable @typescript-eslint/no-explicit-any */
export const OIDC_SEALED_KEYS_MIGRATIONS: readonly NamedMigration[] = [
  {
    // `oidc_sealed_keys`: one key per purpose (the cookie HMAC key), sealed (AES-256-GCM) under the
    // node's secret key, which is not in the database: SQL cannot seal the key 013 left in clear in
    // `oidc_keys`, so the first node to start seals it into this table and deletes the clear row
    // (oidc/keys.ts), as 018's signing keys adopted 013's identity key.
    name: '023_oidc_sealed_keys',
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('oidc_sealed_keys')
        .addColumn('purpose', 'text', (c) => c.primaryKey())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('sealed_secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('oidc_sealed_keys').execute();
    },
  },
];
