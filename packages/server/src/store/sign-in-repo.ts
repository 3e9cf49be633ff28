import type { Kysely, Selectable } from 'kysely';
import type { DashboardSessionsTable, Database } from './schema.js';
import type { DashboardSession, DashboardSessionRepo, SignInLinkRepo } from './sign-in-records.js';

function sessionFromRow(row: Selectable<DashboardSessionsTable>): DashboardSession {
  return {
    tokenHash: row.token_hash,
    accountId: row.account_id,
    csrfToken: row.csrf_token,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** The dashboard_sessions repo over a Kysely database (either engine). */
export function createDashboardSessionRepo(db: Kysely<Database>, now: () => number): DashboardSessionRepo {
  return {
    async create(input) {
      const row = {
        token_hash: input.tokenHash,
        account_id: input.accountId,
        csrf_token: input.csrfToken,
        created_at: now(),
        expires_at: input.expiresAt,
      };
      await db.insertInto('dashboard_sessions').values(row).execute();
      return sessionFromRow(row);
    },

    async byTokenHash(tokenHash, atMs) {
      const row = await db
        .selectFrom('dashboard_sessions')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .where('expires_at', '>', atMs)
        .executeTakeFirst();
      return row && sessionFromRow(row);
    },

    async delete(tokenHash) {
      const result = await db.deleteFrom('dashboard_sessions').where('token_hash', '=', tokenHash).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async deleteForAccount(accountId, keepTokenHash) {
      let query = db.deleteFrom('dashboard_sessions').where('account_id', '=', accountId);
      if (keepTokenHash !== undefined) query = query.where('token_hash', '!=', keepTokenHash);
      const result = await query.executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async deleteExpired(atMs) {
      const result = await db.deleteFrom('dashboard_sessions').where('expires_at', '<=', atMs).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/** The sign_in_links repo over a Kysely database (either engine). */
export function createSignInLinkRepo(db: Kysely<Database>, now: () => number): SignInLinkRepo {
  return {
    async create(input) {
      await db
        .insertInto('sign_in_links')
        .values({ token_hash: input.tokenHash, account_id: input.accountId, created_at: now(), expires_at: input.expiresAt, used_at: null })
        .execute();
    },

    async consume(tokenHash, atMs) {
      // One conditional UPDATE: "unused and unexpired" is checked and changed atomically.
      const row = await db
        .updateTable('sign_in_links')
        .set({ used_at: atMs })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', atMs)
        .returning('account_id')
        .executeTakeFirst();
      return row?.account_id;
    },

    async deleteExpired(atMs) {
      const result = await db.deleteFrom('sign_in_links').where('expires_at', '<=', atMs).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
