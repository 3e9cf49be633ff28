import type { Kysely } from 'kysely';
import type { AcmeSharedRepo } from './domain-records.js';
import type { Database } from './schema.js';

/** The acme_challenges and acme_order_leases repo over a Kysely database (either engine). */
export function createAcmeSharedRepo(db: Kysely<Database>): AcmeSharedRepo {
  return {
    async putChallenge({ token, keyAuthorization, expiresAt }) {
      const fields = { key_authorization: keyAuthorization, expires_at: expiresAt };
      await db
        .insertInto('acme_challenges')
        .values({ token, ...fields })
        .onConflict((oc) => oc.column('token').doUpdateSet(fields))
        .execute();
    },

    async challenge(token, now) {
      const row = await db
        .selectFrom('acme_challenges')
        .select('key_authorization')
        .where('token', '=', token)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row?.key_authorization;
    },

    async deleteChallenge(token) {
      await db.deleteFrom('acme_challenges').where('token', '=', token).execute();
    },

    async deleteExpiredChallenges(now) {
      const result = await db.deleteFrom('acme_challenges').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async acquireOrder(host, nodeId, now, expiresAt) {
      const name = host.toLowerCase();
      // One statement: of two nodes racing for a free or expired lease, the row lock lets one
      // through; the other's conditional update then matches nothing and returns no row.
      const row = await db
        .insertInto('acme_order_leases')
        .values({ host: name, node_id: nodeId, expires_at: expiresAt })
        .onConflict((oc) =>
          oc
            .column('host')
            .doUpdateSet({ node_id: nodeId, expires_at: expiresAt })
            .where((eb) => eb.or([eb('acme_order_leases.expires_at', '<=', now), eb('acme_order_leases.node_id', '=', nodeId)])),
        )
        .returning('node_id')
        .executeTakeFirst();
      return row?.node_id === nodeId;
    },

    async orderHolder(host, now) {
      const row = await db
        .selectFrom('acme_order_leases')
        .select('node_id')
        .where('host', '=', host.toLowerCase())
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row?.node_id;
    },

    async releaseOrder(host, nodeId) {
      await db.deleteFrom('acme_order_leases').where('host', '=', host.toLowerCase()).where('node_id', '=', nodeId).execute();
    },
  };
}
