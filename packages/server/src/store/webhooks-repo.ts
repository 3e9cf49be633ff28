import type { Kysely, Selectable } from 'kysely';
import { newId } from './engine/ids.js';
import type { Database, WebhookDeliveriesTable, WebhooksTable } from './schema.js';
import { DELIVERY_STATES, type DeliveryRecord, type DeliveryState, type WebhookRecord, type WebhookRepo } from './webhook-records.js';

function webhookFromRow(row: Selectable<WebhooksTable>): WebhookRecord {
  const events: unknown = JSON.parse(row.events);
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    events: Array.isArray(events) ? events.filter((e): e is string => typeof e === 'string') : [],
    sealedSecret: row.secret,
    createdAt: row.created_at,
  };
}

function toState(value: string): DeliveryState {
  const state = DELIVERY_STATES.find((s) => s === value);
  if (state === undefined) throw new Error(`unknown webhook delivery state in store: ${value}`);
  return state;
}

function deliveryFromRow(row: Selectable<WebhookDeliveriesTable>): DeliveryRecord {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.event_type,
    state: toState(row.state),
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The webhooks, webhook_events, webhook_deliveries and webhook_attempts repo (either engine). */
export function createWebhookRepo(db: Kysely<Database>, now: () => number): WebhookRepo {
  return {
    async create(input) {
      const row = {
        id: newId('wh'),
        account_id: input.accountId,
        url: input.url,
        events: JSON.stringify(input.events),
        secret: input.sealedSecret,
        created_at: now(),
      };
      await db.insertInto('webhooks').values(row).execute();
      return webhookFromRow(row);
    },

    async listForAccount(accountId) {
      const rows = await db
        .selectFrom('webhooks')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map(webhookFromRow);
    },

    async byId(accountId, id) {
      const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return row && webhookFromRow(row);
    },

    async countForAccount(accountId) {
      const row = await db
        .selectFrom('webhooks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async delete(accountId, id) {
      // Deliveries (and their attempts) go by the foreign keys' cascade.
      const result = await db.deleteFrom('webhooks').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async enqueue(event, webhookIds) {
      return db.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('webhook_events')
          .values({
            id: event.id,
            account_id: event.accountId,
            type: event.type,
            body: event.body,
            dedupe_key: event.dedupeKey ?? null,
            created_at: event.createdAt,
          })
          .onConflict((oc) => oc.column('dedupe_key').doNothing())
          .executeTakeFirst();
        if ((inserted.numInsertedOrUpdatedRows ?? 0n) === 0n) return false;
        if (webhookIds.length === 0) return true;
        const at = now();
        await trx
          .insertInto('webhook_deliveries')
          .values(
            webhookIds.map((webhookId) => ({
              id: newId('msg'),
              webhook_id: webhookId,
              event_id: event.id,
              event_type: event.type,
              state: 'pending',
              attempts: 0,
              next_attempt_at: at,
              lease_node: null,
              lease_until: null,
              created_at: at,
              updated_at: at,
            })),
          )
          .execute();
        return true;
      });
    },

    async due(at, limit) {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', at)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]))
        .orderBy('next_attempt_at')
        .limit(limit)
        .execute();
      return rows.map((r) => r.id);
    },

    async nextDueAt() {
      const row = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.min<number>('next_attempt_at').as('at'))
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
    },

    async claim(id, nodeId, at, leaseUntil) {
      // The conditions are the update's own WHERE: a second node's update re-checks them
      // against the row the first one committed (PostgreSQL re-reads an updated row; SQLite
      // has one writer at a time), so exactly one claim matches.
      const result = await db
        .updateTable('webhook_deliveries')
        .set({ lease_node: nodeId, lease_until: leaseUntil })
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', at)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]))
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) return undefined;
      const row = await db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
        .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
        .selectAll('d')
        .select(['w.url', 'w.secret', 'e.body', 'e.created_at as event_created_at'])
        .where('d.id', '=', id)
        .where('d.lease_node', '=', nodeId)
        .executeTakeFirst();
      if (!row) return undefined;
      return {
        ...deliveryFromRow(row),
        url: row.url,
        sealedSecret: row.secret,
        body: row.body,
        eventCreatedAt: row.event_created_at,
      };
    },

    async finish(id, nodeId, outcome) {
      return db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('webhook_deliveries')
          .set((eb) => ({
            state: outcome.state,
            attempts: eb('attempts', '+', 1),
            next_attempt_at: outcome.nextAttemptAt,
            lease_node: null,
            lease_until: null,
            updated_at: now(),
          }))
          .where('id', '=', id)
          .where('lease_node', '=', nodeId)
          .executeTakeFirst();
        if (result.numUpdatedRows === 0n) return false;
        await trx
          .insertInto('webhook_attempts')
          .values({
            id: newId('att'),
            delivery_id: id,
            attempted_at: outcome.attemptedAt,
            status_code: outcome.statusCode ?? null,
            error: outcome.error ?? null,
            duration_ms: Math.round(outcome.durationMs),
            node_id: nodeId,
          })
          .execute();
        return true;
      });
    },

    async releaseLeases(nodeId) {
      const result = await db
        .updateTable('webhook_deliveries')
        .set({ lease_node: null, lease_until: null })
        .where('lease_node', '=', nodeId)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async deliveries(webhookId, limit) {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('webhook_id', '=', webhookId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      if (rows.length === 0) return [];
      const attempts = await db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where(
          'delivery_id',
          'in',
          rows.map((r) => r.id),
        )
        .orderBy('attempted_at')
        .orderBy('id')
        .execute();
      return rows.map((row) => ({
        ...deliveryFromRow(row),
        attemptList: attempts
          .filter((a) => a.delivery_id === row.id)
          .map((a) => ({
            attemptedAt: a.attempted_at,
            statusCode: a.status_code ?? undefined,
            error: a.error ?? undefined,
            durationMs: a.duration_ms,
          })),
      }));
    },

    async lastDeliveries(accountId) {
      const out = new Map<string, DeliveryRecord>();
      const hooks = await db.selectFrom('webhooks').select('id').where('account_id', '=', accountId).execute();
      for (const { id } of hooks) {
        const row = await db
          .selectFrom('webhook_deliveries')
          .selectAll()
          .where('webhook_id', '=', id)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(1)
          .executeTakeFirst();
        if (row) out.set(id, deliveryFromRow(row));
      }
      return out;
    },

    async retry(webhookId, deliveryId, at) {
      const result = await db
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', next_attempt_at: at, updated_at: now() })
        .where('id', '=', deliveryId)
        .where('webhook_id', '=', webhookId)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async deleteEventsBefore(before) {
      const result = await db.deleteFrom('webhook_events').where('created_at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
