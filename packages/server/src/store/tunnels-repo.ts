import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { newId } from './engine/ids.js';
import { tunnelFromRow } from './rows.js';
import type { Database } from './schema.js';
import type { Tunnel, TunnelBinding, TunnelRepo } from './store.js';
import { isUniqueViolation, PolicyConflictError, PoolConflictError, StoreConflictError } from './store-conflict-error.js';

// upsertOnline retries when it loses a race for a hostname (a concurrent
// insert or takeover between its statements). Each retry re-reads the truth,
// so a small bound is enough; exceeding it means sustained contention.
const UPSERT_ATTEMPTS = 5;
/** Most account ids in one `in (…)` list of countOnlineOf. */
const IDS_PER_QUERY = 500;

/** The tunnels repo over a Kysely database (either engine). */
export function createTunnelRepo(db: Kysely<Database>, now: () => number): TunnelRepo {
  async function byHostname(hostname: string): Promise<Tunnel | undefined> {
    const row = await db.selectFrom('tunnels').selectAll().where('hostname', '=', hostname.toLowerCase()).executeTakeFirst();
    return row && tunnelFromRow(row);
  }

  // Built from single atomic statements instead of a transaction: each
  // statement is safe on its own under concurrency (SQLite WAL with a second
  // process, or several PostgreSQL nodes), and the unique index on hostname
  // is the final arbiter.
  async function upsertOnline(input: TunnelBinding): Promise<Tunnel> {
    if (input.pool === true) return joinPool(input);
    const hostname = input.hostname.toLowerCase();
    for (let attempt = 0; attempt < UPSERT_ATTEMPTS; attempt++) {
      const at = now();
      const fields = {
        status: 'online',
        pinned: input.pinned ? 1 : 0,
        local_addr: input.localAddr,
        agent_version: input.agentVersion,
        agent_ip: input.agentIp,
        node_id: input.nodeId,
        updated_at: at,
        policy: input.policy ?? null,
        proto: input.proto ?? 'http',
        routes: input.routes ?? null,
      };
      // 1. The account already has this hostname: keep its id so API links stay valid. A bind
      // without rules never replaces a live tunnel that has some (on whichever node it is).
      await refuseOtherKind(hostname, input.accountId, false);
      let reuse = db
        .updateTable('tunnels')
        .set(fields)
        .where('hostname', '=', hostname)
        .where('account_id', '=', input.accountId)
        .where('pool_member', '=', '');
      if (input.policy === undefined) reuse = reuse.where((eb) => eb.or([eb('status', '<>', 'online'), eb('policy', 'is', null)]));
      const reused = await reuse.returningAll().executeTakeFirst();
      if (reused) return tunnelFromRow(reused);
      if (input.policy === undefined) {
        const mine = await byHostname(hostname);
        if (mine && mine.accountId === input.accountId) throw new PolicyConflictError(hostname);
      }

      // 2. Another account left the name offline: it is free to take.
      await db
        .deleteFrom('tunnels')
        .where('hostname', '=', hostname)
        .where('account_id', '<>', input.accountId)
        .where('status', '=', 'offline')
        .execute();

      // 3. Claim it. A unique violation means someone holds it (or just took it).
      const row = { id: newId('tun'), account_id: input.accountId, hostname, created_at: at, pool_member: '', ...fields };
      try {
        await db.insertInto('tunnels').values(row).execute();
        return tunnelFromRow(row);
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      const holder = await byHostname(hostname);
      if (holder && holder.accountId !== input.accountId && holder.status === 'online') {
        throw new StoreConflictError(`hostname ${hostname} is online for another account`);
      }
    }
    throw new StoreConflictError(`hostname ${hostname} is contended; gave up after ${UPSERT_ATTEMPTS} attempts`);
  }

  /**
   * Throws when `hostname` is online as the other kind (a pool for a bind without one, or the
   * reverse): PoolConflictError for the same account, StoreConflictError for another.
   */
  async function refuseOtherKind(hostname: string, accountId: string, pool: boolean): Promise<void> {
    const rows = await db
      .selectFrom('tunnels')
      .select(['account_id', 'pool_member'])
      .where('hostname', '=', hostname)
      .where('status', '=', 'online')
      .where('pool_member', pool ? '=' : '<>', '')
      .execute();
    const row = rows[0];
    if (row === undefined) return;
    if (row.account_id !== accountId) throw new StoreConflictError(`hostname ${hostname} is online for another account`);
    throw new PoolConflictError(hostname, !pool);
  }

  /**
   * A pool member's row: one of the account's offline members of the name is reused (a member
   * reconnecting), else a row of its own is added. Another account's online row, or the
   * account's own tunnel without a pool, refuses it.
   */
  async function joinPool(input: TunnelBinding): Promise<Tunnel> {
    const hostname = input.hostname.toLowerCase();
    await refuseOtherKind(hostname, input.accountId, true);
    const others = await db
      .selectFrom('tunnels')
      .select('id')
      .where('hostname', '=', hostname)
      .where('account_id', '<>', input.accountId)
      .where('status', '=', 'online')
      .executeTakeFirst();
    if (others) throw new StoreConflictError(`hostname ${hostname} is online for another account`);
    // Offline rows of the name that are not members of this account's pool make way for it.
    await db
      .deleteFrom('tunnels')
      .where('hostname', '=', hostname)
      .where('status', '=', 'offline')
      .where((eb) => eb.or([eb('account_id', '<>', input.accountId), eb('pool_member', '=', '')]))
      .execute();
    const at = now();
    const fields = {
      status: 'online',
      pinned: input.pinned ? 1 : 0,
      local_addr: input.localAddr,
      agent_version: input.agentVersion,
      agent_ip: input.agentIp,
      node_id: input.nodeId,
      updated_at: at,
      policy: input.policy ?? null,
      proto: input.proto ?? 'http',
      routes: input.routes ?? null,
    };
    const offline = db
      .selectFrom('tunnels')
      .select('id')
      .where('hostname', '=', hostname)
      .where('account_id', '=', input.accountId)
      .where('status', '=', 'offline')
      .limit(1);
    const reused = await db
      .updateTable('tunnels')
      .set(fields)
      .where('id', 'in', offline)
      .where('status', '=', 'offline')
      .returningAll()
      .executeTakeFirst();
    if (reused) return tunnelFromRow(reused);
    const id = newId('tun');
    const row = { id, account_id: input.accountId, hostname, created_at: at, pool_member: id, ...fields };
    await db.insertInto('tunnels').values(row).execute();
    return tunnelFromRow(row);
  }

  /** Online tunnels of an account other than `hostname`'s own row (which a bind reuses); a pool member counts them all. */
  async function countOthersOnline(on: Kysely<Database>, accountId: string, hostname: string | undefined): Promise<number> {
    let query = on
      .selectFrom('tunnels')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('status', '=', 'online');
    if (hostname !== undefined) query = query.where((eb) => eb.or([eb('hostname', '<>', hostname), eb('pool_member', '<>', '')]));
    const row = await query.executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** SQLite: claims of one account in this process, one at a time (one process owns the file's tunnels). */
  const claimChains = new Map<string, Promise<unknown>>();

  async function claimOnline(input: TunnelBinding, limit: number): Promise<Tunnel | undefined> {
    const hostname = input.hostname.toLowerCase();
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
      const previous = claimChains.get(input.accountId) ?? Promise.resolve();
      const claim = previous.then(async () => {
        if ((await countOthersOnline(db, input.accountId, input.pool === true ? undefined : hostname)) >= limit) return undefined;
        return upsertOnline(input);
      });
      const tail = claim.catch(() => undefined);
      claimChains.set(input.accountId, tail);
      void tail.then(() => {
        if (claimChains.get(input.accountId) === tail) claimChains.delete(input.accountId);
      });
      return claim;
    }
    // A session-level advisory lock on one pooled connection, and every statement on that
    // connection: upsertOnline's retry after a unique violation needs statements that commit
    // one by one, which a transaction (aborted by the violation) would not allow.
    return db.connection().execute(async (conn) => {
      const key = `svc:tunnels:${input.accountId}`;
      await sql`select pg_advisory_lock(hashtext(${key}))`.execute(conn);
      try {
        if ((await countOthersOnline(conn, input.accountId, input.pool === true ? undefined : hostname)) >= limit) return undefined;
        return await createTunnelRepo(conn, now).upsertOnline(input);
      } finally {
        await sql`select pg_advisory_unlock(hashtext(${key}))`.execute(conn);
      }
    });
  }

  return {
    upsertOnline,
    claimOnline,
    byHostname,

    async setOffline(id) {
      await db.updateTable('tunnels').set({ status: 'offline', updated_at: now() }).where('id', '=', id).execute();
    },

    async byId(accountId, id) {
      const row = await db.selectFrom('tunnels').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return row && tunnelFromRow(row);
    },

    async listForAccount(accountId) {
      const rows = await db
        .selectFrom('tunnels')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map(tunnelFromRow);
    },

    async delete(accountId, id) {
      const row = await db.deleteFrom('tunnels').where('id', '=', id).where('account_id', '=', accountId).returningAll().executeTakeFirst();
      return row && tunnelFromRow(row);
    },

    async countOnline(accountId) {
      const row = await db
        .selectFrom('tunnels')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .where('status', '=', 'online')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async countOnlineOf(accountIds) {
      const counts = new Map<string, number>();
      for (let start = 0; start < accountIds.length; start += IDS_PER_QUERY) {
        const rows = await db
          .selectFrom('tunnels')
          .select((eb) => ['account_id', eb.fn.countAll<number>().as('n')])
          .where('account_id', 'in', accountIds.slice(start, start + IDS_PER_QUERY))
          .where('status', '=', 'online')
          .groupBy('account_id')
          .execute();
        for (const row of rows) counts.set(row.account_id, Number(row.n));
      }
      return counts;
    },

    async markAllOfflineForNode(nodeId, heldElsewhereAt) {
      let update = db
        .updateTable('tunnels')
        .set({ status: 'offline', updated_at: now() })
        .where('node_id', '=', nodeId)
        .where('status', '=', 'online');
      if (heldElsewhereAt !== undefined) {
        update = update.where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('cluster_routes')
                .select('cluster_routes.hostname')
                .whereRef('cluster_routes.hostname', '=', 'tunnels.hostname')
                .where('cluster_routes.node_id', '<>', nodeId)
                .where('cluster_routes.expires_at', '>', heldElsewhereAt),
            ),
          ),
        );
      }
      const result = await update.executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}
