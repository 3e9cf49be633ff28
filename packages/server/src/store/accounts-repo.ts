import type { Kysely } from 'kysely';
import { newId } from './engine/ids.js';
import { accountFromRow, toPlan } from './rows.js';
import type { Database } from './schema.js';
import type { AccountRepo, Plan } from './store.js';
import { isUniqueViolation, StoreConflictError } from './store-conflict-error.js';

/** Most ids in one `in (…)` list of plansOf: far below either engine's limit on bound parameters. */
const IDS_PER_QUERY = 500;

/** The accounts repo over a Kysely database (either engine). */
export function createAccountRepo(db: Kysely<Database>, now: () => number): AccountRepo {
  return {
    async create(input) {
      const row = {
        id: newId('acc'),
        email: input.email.toLowerCase(),
        name: input.name,
        plan: input.plan,
        created_at: now(),
      };
      // Insert and catch the unique violation rather than check first: a
      // check-then-insert would race with a second process doing the same.
      try {
        await db.insertInto('accounts').values(row).execute();
      } catch (err) {
        if (isUniqueViolation(err)) throw new StoreConflictError(`an account with email ${row.email} already exists`);
        throw err;
      }
      return accountFromRow(row);
    },

    async byId(id) {
      const row = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
      return row && accountFromRow(row);
    },

    async byEmail(email) {
      const row = await db.selectFrom('accounts').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
      return row && accountFromRow(row);
    },

    async setPlan(id, plan) {
      const row = await db.updateTable('accounts').set({ plan }).where('id', '=', id).returningAll().executeTakeFirst();
      return row && accountFromRow(row);
    },

    async plansOf(ids) {
      const plans = new Map<string, Plan>();
      for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
        const chunk = ids.slice(start, start + IDS_PER_QUERY);
        const rows = await db.selectFrom('accounts').select(['id', 'plan']).where('id', 'in', chunk).execute();
        for (const row of rows) plans.set(row.id, toPlan(row.plan));
      }
      return plans;
    },

    async passwordHash(id) {
      const row = await db.selectFrom('accounts').select('password_hash').where('id', '=', id).executeTakeFirst();
      return row?.password_hash ?? undefined;
    },

    async setPasswordHash(id, passwordHash) {
      const result = await db.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', id).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async count() {
      const row = await db
        .selectFrom('accounts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
