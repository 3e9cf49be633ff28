import type { Kysely } from 'kysely';
import { newId } from './engine/ids.js';
import { keyFromRow } from './rows.js';
import type { Database } from './schema.js';
import type { KeyRepo } from './store.js';

/** The api_keys repo over a Kysely database (either engine). */
export function createKeyRepo(db: Kysely<Database>, now: () => number): KeyRepo {
  return {
    async insert(input) {
      const row = {
        id: newId('key'),
        account_id: input.accountId,
        description: input.description,
        prefix: input.prefix,
        token_hash: input.tokenHash,
        created_at: now(),
        last_used_at: null,
        revoked_at: null,
      };
      await db.insertInto('api_keys').values(row).execute();
      return keyFromRow(row);
    },

    async byTokenHash(tokenHash) {
      const row = await db.selectFrom('api_keys').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
      return row && keyFromRow(row);
    },

    async listForAccount(accountId) {
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        // id breaks ties between keys created in the same millisecond, so the order is stable.
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map(keyFromRow);
    },

    async revoke(accountId, id) {
      // One conditional UPDATE: ownership and "not yet revoked" are checked
      // atomically, and the first revocation time is kept.
      const result = await db
        .updateTable('api_keys')
        .set({ revoked_at: now() })
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async countActive(accountId) {
      const row = await db
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async touch(id, atMs) {
      // Touches are fire-and-forget from concurrent requests and may land out
      // of order; the condition keeps the latest time.
      await db
        .updateTable('api_keys')
        .set({ last_used_at: atMs })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', atMs)]))
        .execute();
    },
  };
}
