import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { OidcRepo } from './oidc-records.js';
import { createOidcSealedKeysRepo } from './oidc-sealed-keys-repo.js';
import { createOidcSessionsRepo } from './oidc-sessions-repo.js';

/** The oidc_keys and oidc_tickets repo over a Kysely database (either engine), with revocations and signing keys. */
export function createOidcRepo(db: Kysely<Database>, now: () => number): OidcRepo {
  return {
    ...createOidcSessionsRepo(db),
    ...createOidcSealedKeysRepo(db, now),
    async key(purpose, candidate) {
      // Insert-or-keep, then read: whichever node wrote first, every node reads the same row.
      await db
        .insertInto('oidc_keys')
        .values({ purpose, key_id: candidate.keyId, secret: candidate.secret, created_at: now() })
        .onConflict((conflict) => conflict.column('purpose').doNothing())
        .execute();
      const row = await db.selectFrom('oidc_keys').selectAll().where('purpose', '=', purpose).executeTakeFirstOrThrow();
      return { purpose: row.purpose, keyId: row.key_id, secret: row.secret, createdAt: Number(row.created_at) };
    },

    async putTicket(id, kind, payload, expiresAt) {
      await db.insertInto('oidc_tickets').values({ id, kind, payload, expires_at: expiresAt }).execute();
    },

    async takeTicket(id, kind, atMs) {
      // One DELETE … RETURNING: two takers of one ticket cannot both get it.
      const row = await db
        .deleteFrom('oidc_tickets')
        .where('id', '=', id)
        .where('kind', '=', kind)
        .returning(['payload', 'expires_at'])
        .executeTakeFirst();
      if (row === undefined || Number(row.expires_at) <= atMs) return undefined;
      return row.payload;
    },

    async deleteExpiredTickets(atMs) {
      const result = await db.deleteFrom('oidc_tickets').where('expires_at', '<=', atMs).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
