import type { Kysely } from 'kysely';
import type { OidcSessionsRepo } from './oidc-session-records.js';
import type { Database } from './schema.js';

/** The purpose under which migration 013's single ES256 key was stored in oidc_keys. */
const LEGACY_PURPOSE = 'identity-es256';

/** The oidc_revocations and oidc_signing_keys repo over a Kysely database (either engine). */
export function createOidcSessionsRepo(db: Kysely<Database>): OidcSessionsRepo {
  return {
    async revokeSession({ sessionId, revokedAt, expiresAt }) {
      await db
        .insertInto('oidc_revocations')
        .values({ session_id: sessionId, revoked_at: revokedAt, expires_at: expiresAt })
        .onConflict((conflict) => conflict.column('session_id').doNothing())
        .execute();
    },

    async revokedSince(sinceMs, atMs) {
      const rows = await db
        .selectFrom('oidc_revocations')
        .selectAll()
        .where('revoked_at', '>=', sinceMs)
        .where('expires_at', '>', atMs)
        .execute();
      return rows.map((row) => ({ sessionId: row.session_id, revokedAt: Number(row.revoked_at), expiresAt: Number(row.expires_at) }));
    },

    async deleteExpiredRevocations(atMs) {
      const result = await db.deleteFrom('oidc_revocations').where('expires_at', '<=', atMs).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async signingKeys() {
      const rows = await db.selectFrom('oidc_signing_keys').selectAll().orderBy('created_at').orderBy('kid').execute();
      return rows.map((row) => ({
        kid: row.kid,
        sealedKey: row.sealed_key,
        publicJwk: row.public_jwk,
        createdAt: Number(row.created_at),
        activeAt: Number(row.active_at),
      }));
    },

    async addSigningKey(key) {
      await db
        .insertInto('oidc_signing_keys')
        .values({ kid: key.kid, sealed_key: key.sealedKey, public_jwk: key.publicJwk, created_at: key.createdAt, active_at: key.activeAt })
        .onConflict((conflict) => conflict.column('kid').doNothing())
        .execute();
    },

    async deleteSigningKey(kid) {
      await db.deleteFrom('oidc_signing_keys').where('kid', '=', kid).execute();
    },

    async legacyKey() {
      const row = await db.selectFrom('oidc_keys').selectAll().where('purpose', '=', LEGACY_PURPOSE).executeTakeFirst();
      return row === undefined ? undefined : { kid: row.key_id, privateJwk: row.secret, createdAt: Number(row.created_at) };
    },

    async forgetLegacyKey() {
      await db.deleteFrom('oidc_keys').where('purpose', '=', LEGACY_PURPOSE).execute();
    },
  };
}
