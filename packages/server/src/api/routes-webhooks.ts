import type { z } from 'zod';
import type { DeliveryRecord, DeliveryWithAttempts, Plan, PlanLimits, WebhookRecord, WebhookRepo } from '../store/index.js';
import type { AddressProblem, WebhookEventType } from '../webhooks/index.js';
import { defineRoute } from './define-route.js';
import { ApiError, notFound } from './errors.js';
import type { Route } from './router.js';
import {
  CreatedWebhook,
  DeliveryListQuery,
  DeliveryParams,
  IdParams,
  NewWebhookBody,
  type Webhook,
  type WebhookDelivery,
  WebhookDeliveryList,
  WebhookList,
} from './schemas.js';

/** Deliveries per page without `limit`. */
const DELIVERIES_DEFAULT_LIMIT = 50;

/** Stable `error` codes of the webhook routes. */
export const WebhookErrorCode = {
  /** 400: the URL is not an absolute https:// URL (or http:// where SVC_WEBHOOK_ALLOW_PRIVATE allows it), has credentials, a #fragment or port 0. */
  WEBHOOK_URL_INVALID: 'webhook_url_invalid',
  /** 400: the URL's host is, or resolves to, a loopback, private or link-local address. */
  WEBHOOK_URL_PRIVATE: 'webhook_url_private',
  /** 400: the URL's host name has no address, or the lookup failed; the message names the host. */
  WEBHOOK_URL_UNRESOLVABLE: 'webhook_url_unresolvable',
  /** 403: the plan's webhook limit is reached; the message states the limit. */
  WEBHOOK_LIMIT: 'webhook_limit',
} as const;

/** What the webhook routes need. */
export interface WebhookRouteDeps {
  store: { webhooks: WebhookRepo };
  limitsFor(plan: Plan): PlanLimits;
  webhookAdmin: {
    /** SVC_WEBHOOK_ALLOW_PRIVATE: http:// and private receivers are accepted. */
    allowPrivate: boolean;
    /** Why the host may not receive webhooks, or undefined (checked again at every connect). */
    privateAddressProblem(host: string): Promise<AddressProblem | undefined>;
    /** A fresh signing secret and its sealed form for the store. */
    newSecret(): { secret: string; sealed: string };
    /** Tells the dispatcher to look at the outbox now. */
    wake(): void;
  };
}

/** Sentence of the 403 at the plan's webhook limit. */
export function webhookLimitMessage(plan: Plan, limit: number): string {
  return `Webhook limit reached: the ${plan} plan allows ${limit} webhook${limit === 1 ? '' : 's'}. Delete one with DELETE /v1/webhooks/:id, or move to a plan with more.`;
}

const iso = (ms: number): string => new Date(ms).toISOString();

function lastDeliveryView(d: DeliveryRecord | undefined): z.input<typeof Webhook>['lastDelivery'] {
  if (!d) return null;
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType as WebhookEventType,
    state: d.state,
    attempts: d.attempts,
    updatedAt: iso(d.updatedAt),
  };
}

function webhookView(hook: WebhookRecord, last: DeliveryRecord | undefined): z.input<typeof Webhook> {
  return {
    id: hook.id,
    url: hook.url,
    events: hook.events as WebhookEventType[],
    createdAt: iso(hook.createdAt),
    lastDelivery: lastDeliveryView(last),
  };
}

/** A delivery with its attempts as the API shows it. */
export function deliveryView(d: DeliveryWithAttempts): z.input<typeof WebhookDelivery> {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType as WebhookEventType,
    state: d.state,
    createdAt: iso(d.createdAt),
    nextAttemptAt: d.state === 'pending' ? iso(d.nextAttemptAt) : null,
    attempts: d.attemptList.map((a) => ({
      at: iso(a.attemptedAt),
      statusCode: a.statusCode ?? null,
      error: a.error ?? null,
      durationMs: Math.max(0, Math.round(a.durationMs)),
    })),
  };
}

/** GET/POST /v1/webhooks, DELETE /v1/webhooks/:id, deliveries and their retry. */
export function webhookRoutes(deps: WebhookRouteDeps): Route[] {
  const repo = deps.store.webhooks;
  const admin = deps.webhookAdmin;
  // Adds of one account run one at a time (per node), so parallel adds cannot pass the limit together.
  const queues = new Map<string, Promise<unknown>>();
  function serialized<T>(accountId: string, task: () => Promise<T>): Promise<T> {
    const next = (queues.get(accountId) ?? Promise.resolve()).then(task, task);
    const tail = next.catch(() => undefined);
    queues.set(accountId, tail);
    void tail.then(() => queues.get(accountId) === tail && queues.delete(accountId));
    return next;
  }
  async function owned(accountId: string, id: string): Promise<WebhookRecord> {
    const hook = await repo.byId(accountId, id);
    if (!hook) throw notFound('webhook');
    return hook;
  }

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/webhooks',
      tag: 'webhooks',
      summary: 'Webhooks with their last delivery',
      status: 200,
      response: WebhookList,
      responseDescription: 'the webhooks, newest first',
      async handler({ account }) {
        const [hooks, last] = await Promise.all([repo.listForAccount(account.id), repo.lastDeliveries(account.id)]);
        return { webhooks: hooks.map((hook) => webhookView(hook, last.get(hook.id))) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/webhooks',
      tag: 'webhooks',
      summary: 'Add a webhook',
      description:
        'Events are POSTed to `url` as JSON `{"id","type","createdAt","data"}`, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). ' +
        'The response carries the signing secret this once. 400 webhook_url_invalid: not an https:// URL, or it carries credentials, a #fragment or port 0; 400 webhook_url_private: the host is or resolves to a loopback, private or link-local address; 400 webhook_url_unresolvable: the host name does not resolve; ' +
        '403 webhook_limit: the plan limit is reached.',
      body: NewWebhookBody,
      status: 201,
      response: CreatedWebhook,
      responseDescription: 'the new webhook with its secret',
      errors: [403],
      async handler({ account, body }) {
        const url = receiverUrl(body.url, admin.allowPrivate);
        if (!admin.allowPrivate) {
          const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
          const problem = await admin.privateAddressProblem(host);
          if (problem !== undefined) {
            const code = problem.kind === 'unresolvable' ? WebhookErrorCode.WEBHOOK_URL_UNRESOLVABLE : WebhookErrorCode.WEBHOOK_URL_PRIVATE;
            throw new ApiError(400, code, `webhooks cannot be sent to ${url.host}: ${problem.reason}.`);
          }
        }
        const events = [...new Set(body.events ?? [])];
        return serialized(account.id, async () => {
          const limit = deps.limitsFor(account.plan).webhooks;
          if ((await repo.countForAccount(account.id)) >= limit)
            throw new ApiError(403, WebhookErrorCode.WEBHOOK_LIMIT, webhookLimitMessage(account.plan, limit));
          const { secret, sealed } = admin.newSecret();
          const hook = await repo.create({ accountId: account.id, url: url.href, events, sealedSecret: sealed });
          return { ...webhookView(hook, undefined), secret };
        });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/webhooks/:id',
      tag: 'webhooks',
      summary: 'Remove a webhook',
      description: 'Its pending deliveries are dropped with it.',
      params: IdParams,
      status: 204,
      responseDescription: 'removed',
      async handler({ account, params }) {
        if (!(await repo.delete(account.id, params.id))) throw notFound('webhook');
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/webhooks/:id/deliveries',
      tag: 'webhooks',
      summary: "A webhook's deliveries and their attempts",
      description: 'Each attempt has its time, the status code or the error, and its duration.',
      params: IdParams,
      query: DeliveryListQuery,
      status: 200,
      response: WebhookDeliveryList,
      responseDescription: 'the deliveries, newest first',
      async handler({ account, params, query }) {
        const hook = await owned(account.id, params.id);
        const list = await repo.deliveries(hook.id, query.limit ?? DELIVERIES_DEFAULT_LIMIT);
        return { deliveries: list.map(deliveryView) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/webhooks/:id/deliveries/:deliveryId/retry',
      tag: 'webhooks',
      summary: 'Send a delivery again now',
      description: 'The delivery becomes pending and is sent at once, signed anew, with the same event id (webhook-id).',
      params: DeliveryParams,
      status: 204,
      responseDescription: 'queued',
      async handler({ account, params }) {
        const hook = await owned(account.id, params.id);
        if (!(await repo.retry(hook.id, params.deliveryId, Date.now()))) throw notFound('delivery');
        admin.wake();
      },
    }),
  ];
}

/** The receiver URL, or a 400 saying what is wrong with it. */
function receiverUrl(raw: string, allowHttp: boolean): URL {
  const invalid = (why: string): ApiError => new ApiError(400, WebhookErrorCode.WEBHOOK_URL_INVALID, `url ${why}.`);
  if (!URL.canParse(raw)) throw invalid('must be an absolute URL such as https://example.com/hooks');
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:'))
    throw invalid(allowHttp ? 'must start with https:// or http://' : 'must start with https://');
  if (url.username !== '' || url.password !== '') throw invalid('must not carry a user name or password');
  if (url.hash !== '') throw invalid('must not have a #fragment');
  // Port 0 is not a port anyone listens on: the connect would fail at every delivery.
  if (url.port === '0')
    throw invalid(`has port 0, which no receiver can listen on; leave the port out for the default, or give one from 1 to 65535`);
  return url;
}
