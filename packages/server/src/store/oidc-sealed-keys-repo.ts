import type { Kysely } from 'kysely';
import type { OidcSealedKeysRepo } from './oidc-records.js';
import type { Database } from './schema.js';

/** The oidc_sealed_keys repo, and the clear rows of oidc_keys it replaces, over a Kysely database (either engine). */
export function createOidcSealedKeysRepo(db: Kysely<Database>, now: () => number): OidcSealedKeysRepo {
  return {
    async sealedKey(purpose, candidate) {
      // Insert-or-keep, then read: whichever node wrote first, every node reads the same row.
      await db
        .insertInto('oidc_sealed_keys')
        .values({ purpose, key_id: candidate.keyId, sealed_secret: candidate.sealedSecret, created_at: now() })
        .onConflict((conflict) => conflict.column('purpose').doNothing())
        .execute();
      const row = await db.selectFrom('oidc_sealed_keys').selectAll().where('purpose', '=', purpose).executeTakeFirstOrThrow();
      return { purpose: row.purpose, keyId: row.key_id, sealedSecret: row.sealed_secret, createdAt: Number(row.created_at) };
    },

    async clearKey(purpose) {
      const row = await db.selectFrom('oidc_keys').selectAll().where('purpose', '=', purpose).executeTakeFirst();
      return row === undefined
        ? undefined
        : { purpose: row.purpose, keyId: row.key_id, secret: row.secret, createdAt: Number(row.created_at) };
    },

    async forgetClearKey(purpose) {
      await db.deleteFrom('oidc_keys').where('purpose', '=', purpose).execute();
    },
  };
}
