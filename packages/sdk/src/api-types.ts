import type { components, operations } from './generated/api-types.js';
import type { QueryOf } from './api-transport.js';

type Schemas = components['schemas'];

/** The account a token belongs to (GET /v1/me). */
export type Account = Schemas['Account'];
/** Plan limits and consumption (GET /v1/usage). */
export type Usage = Schemas['Usage'];
/** Daily rollups (GET /v1/usage/history). */
export type UsageHistory = Schemas['UsageHistory'];
export type DailyUsage = Schemas['DailyUsage'];
/** A tunnel as the API lists it (the live `Tunnel` of forward() is another thing). */
export type TunnelInfo = Schemas['Tunnel'];
/** One request captured by the Traffic Inspector. */
export type CapturedRequest = Schemas['CapturedRequest'];
/** One page of GET /v1/requests. */
export type RequestPage = Schemas['RequestPage'];
/** Agent token metadata; the secret is only in CreatedKey. */
export type Key = Schemas['Key'];
export type CreatedKey = Schemas['CreatedKey'];
export type NewKey = Schemas['NewKey'];
export type Domain = Schemas['Domain'];
/** A domain with the outcome of a verification check. */
export type DomainCheck = Schemas['DomainCheck'];
/** A webhook receiver; the signing secret is only in CreatedWebhook. */
export type Webhook = Schemas['Webhook'];
export type CreatedWebhook = Schemas['CreatedWebhook'];
export type NewWebhook = Schemas['NewWebhook'];
/** One event for one webhook, with each attempt to send it. */
export type WebhookDelivery = Schemas['WebhookDelivery'];
/** An event type a webhook can subscribe to (`tunnel.offline`, `certificate.failed`…). */
export type WebhookEventType = Webhook['events'][number];
/** Paging of GET /v1/webhooks/:id/deliveries. */
export type DeliveryQuery = QueryOf<operations['getV1WebhooksIdDeliveries']>;
/** A TCP address reserved by the account (POST /v1/tcp-addresses); `svc tcp --remote-addr <addr>` binds it. */
export type TcpAddress = Schemas['TcpAddress'];
/** A dashboard password to set; `currentPassword` once the account has one. */
export type PasswordChange = Schemas['PasswordChange'];

/** A status filter as the API reads it; a number is sent as its digits. */
type WithNumericStatus<Query extends { status?: string }> = Omit<Query, 'status'> & { status?: Query['status'] | number };

/** Filters and paging of GET /v1/requests; `status` is exact (`404`) or a class (`'4xx'`). */
export type RequestFilters = WithNumericStatus<QueryOf<operations['getV1Requests']>>;
/** The days of GET /v1/usage/history (YYYY-MM-DD, UTC, inclusive). */
export type UsageRange = QueryOf<operations['getV1UsageHistory']>;
/** Filters of the live stream; with `since`, stored records from then come first. */
export type StreamFilters = WithNumericStatus<QueryOf<operations['getV1RequestsStream']>>;
/** Data of a `dropped` event of the live stream. */
export type DroppedNotice = Schemas['DroppedEvent'];

/** What requests.stream() yields: a record, or notice that the server skipped some. */
export type RequestStreamEvent =
  /** A request finished; `id` is the record's id. */
  | { type: 'request'; id: string; request: CapturedRequest }
  /** This subscriber fell behind and `dropped` records were skipped. */
  | ({ type: 'dropped' } & DroppedNotice);
