import { sql, type Kysely, type Selectable } from 'kysely';
import { CERT_STATES, DOMAIN_STATES, type Domain, type DomainRepo } from './domain-records.js';
import { newId } from './engine/ids.js';
import type { Database, DomainsTable } from './schema.js';
import { isUniqueViolation, StoreConflictError } from './store-conflict-error.js';

function pick<T extends string>(values: readonly T[], value: string, what: string): T {
  const found = values.find((v) => v === value);
  // Only the store writes these columns, so an unknown value means a broken database.
  if (found === undefined) throw new Error(`unknown ${what} in store: ${value}`);
  return found;
}

/** Maps a domains row to a Domain (SQL null becomes undefined). */
function domainFromRow(row: Selectable<DomainsTable>): Domain {
  return {
    id: row.id,
    accountId: row.account_id,
    host: row.host,
    state: pick(DOMAIN_STATES, row.state, 'domain state'),
    txtValue: row.txt_value,
    verifiedAt: row.verified_at ?? undefined,
    createdAt: row.created_at,
    certState: pick(CERT_STATES, row.cert_state, 'certificate state'),
    certError: row.cert_error ?? undefined,
    certExpiresAt: row.cert_expires_at ?? undefined,
  };
}

/** `a.b.example.com` → [a.b.example.com, b.example.com, example.com]: the names that can cover it. */
function coveringCandidates(hostname: string): string[] {
  const labels = hostname.toLowerCase().replace(/\.$/, '').split('.');
  const out: string[] = [];
  // Stops at two labels: a verified single-label name cannot exist (domains/host.ts refuses it).
  for (let i = 0; i + 2 <= labels.length; i++) out.push(labels.slice(i).join('.'));
  return out;
}

/** The domains repo over a Kysely database (either engine). */
export function createDomainRepo(db: Kysely<Database>, now: () => number): DomainRepo {
  async function byIdOnly(id: string): Promise<Domain | undefined> {
    const row = await db.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst();
    return row && domainFromRow(row);
  }

  return {
    async create(input) {
      const row = {
        id: newId('dom'),
        account_id: input.accountId,
        host: input.host.toLowerCase(),
        state: 'pending',
        txt_value: input.txtValue,
        verified_at: null,
        created_at: now(),
        cert_state: 'none',
        cert_error: null,
        cert_expires_at: null,
      };
      try {
        await db.insertInto('domains').values(row).execute();
      } catch (err) {
        if (isUniqueViolation(err)) throw new StoreConflictError(`this account already has the domain ${row.host}`);
        throw err;
      }
      return domainFromRow(row);
    },

    async listForAccount(accountId) {
      const rows = await db
        .selectFrom('domains')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map(domainFromRow);
    },

    async byId(accountId, id) {
      const row = await db.selectFrom('domains').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return row && domainFromRow(row);
    },

    async byHost(host) {
      const rows = await db
        .selectFrom('domains')
        .selectAll()
        .where('host', '=', host.toLowerCase())
        .orderBy('created_at', 'asc')
        .orderBy('id', 'asc')
        .execute();
      const domains = rows.map(domainFromRow);
      return [...domains.filter((d) => d.state === 'verified'), ...domains.filter((d) => d.state !== 'verified')];
    },

    async delete(accountId, id) {
      const row = await db.deleteFrom('domains').where('id', '=', id).where('account_id', '=', accountId).returningAll().executeTakeFirst();
      return row && domainFromRow(row);
    },

    async markVerified(id) {
      // One conditional UPDATE: it verifies only while no other account holds the
      // host verified. Two accounts racing both pass the NOT EXISTS; the unique
      // partial index on verified hosts then rejects the second commit.
      let row: Selectable<DomainsTable> | undefined;
      try {
        row = await db
          .updateTable('domains')
          .set({ state: 'verified', verified_at: now() })
          .where('id', '=', id)
          .where('state', '=', 'pending')
          .where(({ not, exists, selectFrom }) =>
            not(
              exists(
                selectFrom('domains as other')
                  .select(sql`1`.as('one'))
                  .whereRef('other.host', '=', 'domains.host')
                  .where('other.state', '=', 'verified'),
              ),
            ),
          )
          .returningAll()
          .executeTakeFirst();
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      if (row) return domainFromRow(row);
      const current = await byIdOnly(id);
      if (current === undefined || current.state === 'verified') return current;
      throw new StoreConflictError(`the domain ${current.host} is verified by another account`);
    },

    async setCertState(host, state, error, expiresAt) {
      await db
        .updateTable('domains')
        .set({ cert_state: state, cert_error: error ?? null, ...(expiresAt === undefined ? {} : { cert_expires_at: expiresAt }) })
        .where('host', '=', host.toLowerCase())
        .where('state', '=', 'verified')
        .execute();
    },

    async countForAccount(accountId) {
      const row = await db
        .selectFrom('domains')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async verifiedHostCovering(hostname) {
      const candidates = coveringCandidates(hostname);
      if (candidates.length === 0) return undefined;
      const rows = await db.selectFrom('domains').selectAll().where('state', '=', 'verified').where('host', 'in', candidates).execute();
      // At most one verified row per host (unique index), so longest host = most specific parent.
      const best = rows.sort((a, b) => b.host.length - a.host.length)[0];
      return best && domainFromRow(best);
    },
  };
}
