import type { Kysely, Selectable } from 'kysely';
import { newId } from './engine/ids.js';
import type { Database, TcpAddressesTable } from './schema.js';
import type { TcpAddress, TcpAddressRepo } from './tcp-address-records.js';

function addressFromRow(row: Selectable<TcpAddressesTable>): TcpAddress {
  return { id: row.id, accountId: row.account_id, port: Number(row.port), createdAt: Number(row.created_at) };
}

/** The TCP address repo over a Kysely database (either engine). */
export function createTcpAddressRepo(db: Kysely<Database>, clock: () => number): TcpAddressRepo {
  /**
   * One statement: inserts the lease, or takes the row over when `mayTake` allows; of two
   * racers the row lock lets one through, and the other's conditional update returns no row.
   */
  async function upsertLease(port: number, accountId: string, nodeId: string, now: number, own: boolean): Promise<boolean> {
    const row = await db
      .insertInto('tcp_addresses')
      .values({ port, id: newId('tcp'), account_id: accountId, reserved: 0, node_id: nodeId, held_until: null, created_at: clock() })
      .onConflict((oc) =>
        oc
          .column('port')
          .doUpdateSet({ account_id: accountId, node_id: nodeId, held_until: null })
          .where((eb) => {
            const lapsed = eb.and([eb('tcp_addresses.held_until', 'is not', null), eb('tcp_addresses.held_until', '<', now)]);
            const mayTake = own ? eb.or([lapsed, eb('tcp_addresses.account_id', '=', accountId)]) : lapsed;
            return eb.and([eb('tcp_addresses.reserved', '=', 0), mayTake]);
          }),
      )
      .returning('port')
      .executeTakeFirst();
    return row !== undefined;
  }

  return {
    claimFree(port, accountId, nodeId, now) {
      return upsertLease(port, accountId, nodeId, now, false);
    },

    async claimOwn(port, accountId, nodeId, now) {
      const row = await db.selectFrom('tcp_addresses').select(['account_id', 'reserved']).where('port', '=', port).executeTakeFirst();
      if (row && Number(row.reserved) === 1) return row.account_id === accountId ? 'ok' : 'not-yours';
      return (await upsertLease(port, accountId, nodeId, now, true)) ? 'ok' : 'taken';
    },

    async claimAddress(port, accountId, nodeId, now) {
      const row = await db
        .selectFrom('tcp_addresses')
        .select(['account_id', 'reserved', 'held_until'])
        .where('port', '=', port)
        .executeTakeFirst();
      if (!row) return 'not-yours';
      if (Number(row.reserved) === 1) return row.account_id === accountId ? 'ok' : 'not-yours';
      const live = row.held_until === null || Number(row.held_until) >= now;
      if (row.account_id !== accountId) return live ? 'taken' : 'not-yours';
      // The account's own lease, taken back only while it still holds: one conditional statement,
      // so a lease that lapsed and went to another account in the meantime is not.
      const taken = await db
        .updateTable('tcp_addresses')
        .set({ node_id: nodeId, held_until: null })
        .where('port', '=', port)
        .where('account_id', '=', accountId)
        .where('reserved', '=', 0)
        .where((eb) => eb.or([eb('held_until', 'is', null), eb('held_until', '>=', now)]))
        .returning('port')
        .executeTakeFirst();
      return taken ? 'ok' : 'not-yours';
    },

    async holdLease(port, accountId, until) {
      await db
        .updateTable('tcp_addresses')
        .set({ held_until: until })
        .where('port', '=', port)
        .where('account_id', '=', accountId)
        .where('reserved', '=', 0)
        .execute();
    },

    async dropLease(port, accountId) {
      await db.deleteFrom('tcp_addresses').where('port', '=', port).where('account_id', '=', accountId).where('reserved', '=', 0).execute();
    },

    async holdNodeLeases(nodeId, until) {
      const result = await db
        .updateTable('tcp_addresses')
        .set({ held_until: until })
        .where('node_id', '=', nodeId)
        .where('reserved', '=', 0)
        .where('held_until', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async takenPorts(from, to, now) {
      const rows = await db
        .selectFrom('tcp_addresses')
        .select('port')
        .where('port', '>=', from)
        .where('port', '<=', to)
        .where((eb) => eb.or([eb('reserved', '=', 1), eb('held_until', 'is', null), eb('held_until', '>=', now)]))
        .execute();
      return new Set(rows.map((row) => Number(row.port)));
    },

    async reserve(accountId, port, now) {
      const row = await db
        .insertInto('tcp_addresses')
        .values({ port, id: newId('tcp'), account_id: accountId, reserved: 1, node_id: '', held_until: null, created_at: clock() })
        .onConflict((oc) =>
          oc
            .column('port')
            .doUpdateSet({ account_id: accountId, reserved: 1, held_until: null })
            .where((eb) =>
              eb.and([
                eb('tcp_addresses.reserved', '=', 0),
                eb.or([
                  eb('tcp_addresses.account_id', '=', accountId),
                  eb.and([eb('tcp_addresses.held_until', 'is not', null), eb('tcp_addresses.held_until', '<', now)]),
                ]),
              ]),
            ),
        )
        .returningAll()
        .executeTakeFirst();
      return row && addressFromRow(row);
    },

    async listReserved(accountId) {
      const rows = await db
        .selectFrom('tcp_addresses')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('reserved', '=', 1)
        .orderBy('port')
        .execute();
      return rows.map(addressFromRow);
    },

    async countReserved(accountId) {
      const row = await db
        .selectFrom('tcp_addresses')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .where('reserved', '=', 1)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async deleteReserved(accountId, id) {
      const row = await db
        .deleteFrom('tcp_addresses')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where('reserved', '=', 1)
        .returningAll()
        .executeTakeFirst();
      return row && addressFromRow(row);
    },
  };
}
