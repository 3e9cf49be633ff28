import type { Kysely, Selectable } from 'kysely';
import type { AcmeAccountRepo, CertificateRepo, StoredCertificate } from './domain-records.js';
import type { CertificatesTable, Database } from './schema.js';

/** Maps a certificates row to a StoredCertificate. */
function certificateFromRow(row: Selectable<CertificatesTable>): StoredCertificate {
  return {
    host: row.host,
    certPem: row.cert_pem,
    keyPem: row.key_pem,
    expiresAt: row.expires_at,
    issuedAt: row.issued_at,
  };
}

/** The certificates repo over a Kysely database (either engine). */
export function createCertificateRepo(db: Kysely<Database>): CertificateRepo {
  return {
    async get(host) {
      const row = await db.selectFrom('certificates').selectAll().where('host', '=', host.toLowerCase()).executeTakeFirst();
      return row && certificateFromRow(row);
    },

    async put(cert) {
      const fields = { cert_pem: cert.certPem, key_pem: cert.keyPem, expires_at: cert.expiresAt, issued_at: cert.issuedAt };
      // An upsert in one statement: two nodes storing a renewal at once leave one complete row.
      await db
        .insertInto('certificates')
        .values({ host: cert.host.toLowerCase(), ...fields })
        .onConflict((oc) => oc.column('host').doUpdateSet(fields))
        .execute();
    },

    async listExpiringBefore(atMs, limit = 1000) {
      const rows = await db
        .selectFrom('certificates')
        .selectAll()
        .where('expires_at', '<', atMs)
        .orderBy('expires_at', 'asc')
        .orderBy('host', 'asc')
        .limit(limit)
        .execute();
      return rows.map(certificateFromRow);
    },

    async delete(host) {
      const result = await db.deleteFrom('certificates').where('host', '=', host.toLowerCase()).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

/** The acme_account repo over a Kysely database (either engine). */
export function createAcmeAccountRepo(db: Kysely<Database>): AcmeAccountRepo {
  async function get(id: string) {
    const row = await db.selectFrom('acme_account').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, keyPem: row.key_pem, url: row.url ?? undefined };
  }

  return {
    get,

    async putIfAbsent(account) {
      // DO NOTHING on conflict, then read back: whoever inserted first wins, and
      // every caller leaves with the winner's key.
      await db
        .insertInto('acme_account')
        .values({ id: account.id, key_pem: account.keyPem, url: null })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      const stored = await get(account.id);
      if (stored === undefined) throw new Error(`acme account ${account.id} vanished right after being stored`);
      return stored;
    },

    async setUrl(id, url) {
      await db.updateTable('acme_account').set({ url }).where('id', '=', id).execute();
    },
  };
}
