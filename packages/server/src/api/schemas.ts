import { z } from 'zod';
import { WEBHOOK_PROVIDERS } from '@svcrouter/protocol';
import type { TxtFailureCode } from '../domains/index.js';
import { MAX_REQUEST_PAGE } from '../store/index.js';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/index.js';

// The API's wire shapes. Each one validates (requests before the handler, responses before
// they are sent) and is the source of the OpenAPI document, so the two cannot drift.
// Response objects are strict: a field not listed here fails the response instead of leaking.

/** Named schemas: they become `components.schemas` in the OpenAPI document. */
export const apiSchemas = z.registry<{ id: string; description?: string }>();
/** The same named schemas by id, to validate a response against what OpenAPI says it is. */
export const schemasById: Record<string, z.ZodType> = {};

/** Registers a schema under `id` for OpenAPI and response checks. */
export function named<T extends z.ZodType>(id: string, description: string, schema: T): T {
  apiSchemas.add(schema, { id, description });
  schemasById[id] = schema;
  return schema;
}

/** A count or byte value: a non-negative safe integer (JSON numbers stay exact up to 2^53). */
const count = z.int().nonnegative();
const timestamp = z.iso.datetime().describe('ISO 8601 UTC timestamp');
const queryTimestamp = z.iso.datetime({ offset: true });
const day = z.iso.date().describe('calendar day (UTC), YYYY-MM-DD');
const plan = z.enum(['free', 'pro']);
/** Longest key description. */
export const MAX_KEY_DESCRIPTION = 200;
/** Page size of GET /v1/requests without `limit`. */
export const REQUESTS_DEFAULT_LIMIT = 50;
/** Largest page of GET /v1/requests. */
export const REQUESTS_MAX_LIMIT = MAX_REQUEST_PAGE;

/** Body of every error but 401. */
export const ErrorBody = named(
  'Error',
  'Every error except 401: a stable machine code and a sentence for people.',
  z.strictObject({ error: z.string().describe('stable code, e.g. not_found'), message: z.string() }),
);

/** Body of every 401. */
export const UnauthorizedBody = named(
  'Unauthorized',
  'Missing, malformed or revoked token; exactly {"error":"unauthorized"}.',
  z.strictObject({ error: z.literal('unauthorized') }),
);

/** Path parameters of the `/:id` routes. */
export const IdParams = z.strictObject({ id: z.string().describe("resource id; unknown and other accounts' ids answer 404 alike") });

/** GET /v1/me. */
export const Account = named(
  'Account',
  'The account the token belongs to.',
  z.strictObject({ id: z.string(), email: z.string(), name: z.string(), plan }),
);

const Amounts = z.strictObject({ domains: count, tunnels: count, bandwidthBytes: count });
/** GET /v1/usage. */
export const Usage = named(
  'Usage',
  'Plan limits and current consumption: live tunnels, custom domains, bytes this calendar month (UTC).',
  z.strictObject({ plan, limits: Amounts, used: Amounts }),
);

/** Query of GET /v1/usage/history. */
export const UsageHistoryQuery = z
  .strictObject({
    from: day.optional().describe('first day, inclusive (UTC)'),
    to: day.optional().describe('last day, inclusive (UTC)'),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, {
    path: ['from'],
    message: 'must not be after "to"',
  });

/** One day of GET /v1/usage/history. */
export const DailyUsage = named(
  'DailyUsage',
  'One UTC day of usage.',
  z.strictObject({ date: day, bandwidthBytes: count, requests: count, peakTunnels: count }),
);
/** GET /v1/usage/history. */
export const UsageHistory = named('UsageHistory', 'Daily rollups, newest first.', z.strictObject({ days: z.array(DailyUsage) }));

/** One tunnel of GET /v1/tunnels. */
export const Tunnel = named(
  'Tunnel',
  'A tunnel of the account; status comes from the live routing table.',
  z.strictObject({
    id: z.string(),
    status: z.enum(['online', 'offline']),
    proto: z
      .enum(['http', 'tcp', 'tls'])
      .describe(
        'http: an HTTPS hostname; tcp: a port on the edge (svc tcp); tls: a hostname whose TLS the local service terminates (svc tls)',
      ),
    url: z.string().describe('public address: https://host for http, tcp://host:port for tcp, tls://host:port for tls'),
    host: z.string().describe('the hostname, or host:port for tcp'),
    pinned: z.boolean().describe('the agent chose the name (SVC_SUBDOMAIN / SVC_DOMAIN)'),
    pool: z.boolean().describe('one member of a pool: several tunnels of the account serve this url (--pool)'),
    local: z.string().describe("the agent's local address"),
    routes: z
      .array(z.strictObject({ path: z.string().describe('path prefix'), local: z.string().describe('host:port of the local service') }))
      .describe('paths its last bind served from other local services than local (--route); empty: local serves every path'),
    agentVersion: z.string(),
    agentIp: z.string(),
    access: z
      .strictObject({
        basicAuth: z.array(z.string()).describe('user names that may sign in (passwords are never shown)'),
        cidrAllow: z.array(z.string()).describe('only these addresses may visit; empty: all'),
        cidrDeny: z.array(z.string()).describe('these addresses get 403'),
        oidc: z.string().nullable().describe('the OpenID Connect provider visitors sign in with; null: no single sign-on'),
        allowEmail: z.array(z.string()).describe('with oidc: signed-in emails allowed'),
        allowDomain: z.array(z.string()).describe('with oidc: email domains allowed; with allowEmail also empty, every signed-in visitor'),
      })
      .describe("the tunnel's access rules, without secrets"),
    traffic: z
      .strictObject({
        requestHeaderAdd: z.array(z.string()).describe('names of headers set on requests (values are not shown)'),
        requestHeaderRemove: z.array(z.string()).describe('headers removed from requests'),
        responseHeaderAdd: z.array(z.string()).describe('names of headers set on responses (values are not shown)'),
        responseHeaderRemove: z.array(z.string()).describe('headers removed from responses'),
        rateLimit: z
          .strictObject({ count: z.int(), windowMs: z.int() })
          .nullable()
          .describe('at most count requests per visitor address in any windowMs; null: no limit'),
        verifyWebhook: z
          .strictObject({ provider: z.enum(WEBHOOK_PROVIDERS), maxBody: z.int() })
          .nullable()
          .describe('webhook signatures checked for this provider (the secret is never shown); null: none'),
        rules: z.array(z.string()).describe('edge rules in order, one line each'),
      })
      .describe("the tunnel's traffic rules, without secrets"),
    createdAt: timestamp,
    updatedAt: timestamp,
  }),
);
/** GET /v1/tunnels. */
export const TunnelList = named('TunnelList', 'Tunnels of the account, newest first.', z.strictObject({ tunnels: z.array(Tunnel) }));

/** One record of GET /v1/requests: the captured fields plus id, tunnelId and timestamp. */
export const CapturedRequest = named(
  'CapturedRequest',
  'One request the edge served for a tunnel of the account.',
  z.strictObject({
    id: z.string(),
    tunnelId: z.string().nullable().describe('null when the hostname had no tunnel record'),
    timestamp,
    method: z.string(),
    path: z.string(),
    status: z.int().describe('0 when the visitor left before a response'),
    durationMs: count,
    bytes: count.describe('response size in bytes'),
    ip: z.string(),
    userAgent: z.string(),
    proto: z.string().describe('HTTP protocol version, e.g. HTTP/1.1'),
    host: z.string(),
    target: z.string().nullable().describe('host:port of the local service that served it, for a tunnel with routes; else null'),
  }),
);
/** GET /v1/requests. */
export const RequestPage = named(
  'RequestPage',
  'A page of captured requests, newest first; pass nextCursor as cursor for the next page (null: no more).',
  z.strictObject({ requests: z.array(CapturedRequest), nextCursor: z.string().nullable() }),
);

/** The record filters GET /v1/requests and GET /v1/requests/stream share. */
const requestFilters = {
  host: z.string().min(1).max(253).optional().describe('only this hostname'),
  tunnel: z.string().min(1).max(128).optional().describe('only this tunnel id'),
  status: z
    .string()
    .regex(/^[1-5]([0-9]{2}|[xX]{2})$/, 'must be an HTTP status such as 404 or a status class such as 4xx')
    .optional()
    .describe('only this HTTP status (404) or status class (4xx)'),
  method: z
    .string()
    .regex(/^[A-Za-z]{1,20}$/)
    .optional()
    .describe('only this HTTP method (case-insensitive)'),
  since: queryTimestamp.optional().describe('at or after this time'),
};

/** Query of GET /v1/requests. */
export const RequestsQuery = z
  .strictObject({
    limit: z.coerce.number().int().min(1).max(REQUESTS_MAX_LIMIT).optional().describe(`page size, default ${REQUESTS_DEFAULT_LIMIT}`),
    cursor: z.string().max(512).optional().describe('nextCursor of the previous page, unchanged'),
    ...requestFilters,
    until: queryTimestamp.optional().describe('before this time'),
  })
  .refine((q) => q.since === undefined || q.until === undefined || Date.parse(q.since) <= Date.parse(q.until), {
    path: ['since'],
    message: 'must not be after "until"',
  });

/** Query of GET /v1/requests/stream. */
export const RequestStreamQuery = z.strictObject({
  ...requestFilters,
  since: requestFilters.since.describe('first send the stored records at or after this time, oldest first, then follow live'),
});

/** Data of the stream's `dropped` event. */
export const DroppedEvent = named(
  'DroppedEvent',
  'Records a live stream did not send because its client read too slowly.',
  z.strictObject({ dropped: count.describe('records not sent since the previous event'), message: z.string() }),
);

/** Key metadata (GET /v1/keys items). */
export const Key = named(
  'Key',
  'Agent token metadata; the secret is only ever returned by POST /v1/keys.',
  z.strictObject({
    id: z.string(),
    description: z.string(),
    prefix: z.string().describe('first characters of the token, for recognising it'),
    createdAt: timestamp,
    lastUsedAt: timestamp.nullable(),
  }),
);
/** GET /v1/keys. */
export const KeyList = named('KeyList', 'Active agent tokens, newest first.', z.strictObject({ keys: z.array(Key) }));
/** Body of POST /v1/keys. */
export const NewKeyBody = named(
  'NewKey',
  'Body of POST /v1/keys.',
  z.strictObject({ description: z.string().max(MAX_KEY_DESCRIPTION).optional().describe('free text, default empty') }),
);
/** POST /v1/keys (201). */
export const CreatedKey = named(
  'CreatedKey',
  'A new agent token: the metadata plus the secret, shown this once.',
  Key.extend({ token: z.string().regex(/^svc_/).describe('the secret (SVC_TOKEN); store it now, it is not shown again') }),
);

/** GET /healthz. */
export const Health = named('Health', 'The process is alive.', z.strictObject({ status: z.literal('ok') }));
/** GET /readyz (200 and 503). */
export const Readiness = named(
  'Readiness',
  'Whether this node can serve: the store answers a query and the listeners accept connections.',
  z.strictObject({
    status: z.enum(['ready', 'unavailable']),
    checks: z.record(z.string(), z.enum(['ok', 'failed'])),
  }),
);

// Custom domains (routes-domains.ts).

/** Every TXT verification failure code, with what it means (docs/custom-domains.md has the fixes). */
const TXT_FAILURE_CODES: Record<TxtFailureCode, string> = {
  txt_not_found: 'no TXT record at _svcrouter.<host>',
  txt_doubled_suffix: 'the record sits at _svcrouter.<host>.<zone>: the DNS provider appended the zone a second time',
  txt_whitespace: 'the value has extra whitespace around it',
  txt_truncated: 'the value is cut off',
  txt_wrong_value: 'a different value is published',
  dns_timeout: 'the DNS lookup timed out',
  dns_error: 'the DNS lookup failed',
};
const txtFailureCode = z.enum(Object.keys(TXT_FAILURE_CODES) as [TxtFailureCode, ...TxtFailureCode[]]);

const EdgeTarget = named(
  'EdgeTarget',
  'Where a custom host must point (SVC_EDGE_TARGET): a CNAME to `cname`, or A records to the addresses in `a`.',
  z.strictObject({
    cname: z.string().nullable().describe('hostname to CNAME to; null when the operator gave only addresses'),
    a: z.array(z.string()).describe('IPv4 addresses for A records (an apex domain cannot have a CNAME)'),
  }),
);

/** One custom domain (GET /v1/domains items, POST /v1/domains 201, GET /v1/domains/:id). */
export const Domain = named(
  'Domain',
  'A custom domain of the account: the TXT record proving ownership, where the host must point, and its certificate.',
  z.strictObject({
    id: z.string(),
    host: z.string().describe('lower-case ASCII (an IDN is stored as punycode)'),
    state: z
      .enum(['pending', 'verified'])
      .describe('pending: added, TXT record not verified yet; verified: ownership proven, tunnels may bind'),
    verified: z.boolean().describe('state === "verified"'),
    txtRecord: z
      .strictObject({ type: z.literal('TXT'), name: z.string().describe('_svcrouter.<host>'), value: z.string().describe('svc-verify-…') })
      .describe('the record to publish; its value never changes while the domain exists'),
    target: EdgeTarget.nullable().describe('where the host must point; null when the operator configured no SVC_EDGE_TARGET'),
    verifiedAt: timestamp.nullable(),
    createdAt: timestamp,
    certificate: z
      .strictObject({
        state: z
          .enum(['none', 'pending', 'issued', 'failed'])
          .describe('none: not requested yet (the first HTTPS request orders it); pending: ordering; issued; failed: see error'),
        error: z.string().nullable().describe('why the latest order (or renewal) failed'),
        expiresAt: timestamp.nullable(),
      })
      .describe('the latest certificate under this domain; the private key is never returned'),
  }),
);
/** GET /v1/domains. */
export const DomainList = named('DomainList', 'Custom domains of the account, newest first.', z.strictObject({ domains: z.array(Domain) }));
/** Body of POST /v1/domains. */
export const NewDomainBody = named(
  'NewDomain',
  'Body of POST /v1/domains.',
  z.strictObject({ host: z.string().max(1024).describe('the host to add, e.g. app.example.com; an IDN is converted to punycode') }),
);
/** The TXT check of POST /v1/domains/:id/verify. */
export const DomainVerification = named(
  'DomainVerification',
  `Outcome of the TXT lookup. code (null when ok): ${Object.entries(TXT_FAILURE_CODES)
    .map(([c, m]) => `${c}: ${m}`)
    .join('; ')}.`,
  z.strictObject({ ok: z.boolean(), code: txtFailureCode.nullable(), message: z.string().describe('what was found and what to do') }),
);
/** The routing preflight of POST /v1/domains/:id/verify. */
export const DomainRouting = named(
  'DomainRouting',
  'Informational DNS preflight: whether the host already points at the edge. It never blocks verification.',
  z.strictObject({
    pointsAtEdge: z.boolean(),
    found: z
      .strictObject({ cname: z.array(z.string()), a: z.array(z.string()) })
      .describe("the host's CNAME and A records as resolved now"),
    expected: EdgeTarget,
    message: z.string(),
  }),
);
/** POST /v1/domains/:id/verify (200, verified or not). */
export const DomainCheck = named(
  'DomainCheck',
  'The domain after a verification attempt, with the TXT outcome and the routing preflight (null without SVC_EDGE_TARGET).',
  Domain.extend({ verification: DomainVerification, routing: DomainRouting.nullable() }),
);

// Dashboard sign-in (/auth/* and /v1/me/password). Passwords are checked in the handlers, so
// a short one gets the same sentence everywhere ("password must be at least 8 characters").
const password = z.string().describe('8 to 1024 characters');
const signupMode = z.enum(['open', 'closed']).describe('whether POST /auth/signup creates accounts (SVC_SIGNUP)');
/** Body of POST /auth/signup. */
export const SignUpBody = named(
  'SignUp',
  'Body of POST /auth/signup.',
  z.strictObject({ email: z.string().max(254), password, name: z.string().max(100).optional() }),
);
/** Body of POST /auth/signin. */
export const SignInBody = named(
  'SignIn',
  'Body of POST /auth/signin.',
  z.strictObject({ email: z.string().max(254), password: z.string().max(1024) }),
);
/** Body of POST /auth/link. */
export const LinkBody = named(
  'SignInLink',
  "Body of POST /auth/link: the one-time token from the link's fragment and the new password.",
  z.strictObject({ token: z.string().max(100).describe('svl_…'), password }),
);
/** Answer of a successful sign-up, sign-in or link; the session cookie comes in Set-Cookie. */
export const SignedIn = named(
  'SignedIn',
  'The signed-in account and the CSRF token to send in X-CSRF-Token; the session itself is the HttpOnly session cookie (__Host-svc_session over HTTPS, svc_session over plain HTTP).',
  z.strictObject({ account: Account, csrfToken: z.string() }),
);
/** GET /auth/session. */
export const SessionState = named(
  'SessionState',
  'Whether this browser is signed in (by its session cookie), and whether sign-up is open.',
  z.discriminatedUnion('signedIn', [
    z.strictObject({ signedIn: z.literal(false), signup: signupMode }),
    z.strictObject({ signedIn: z.literal(true), signup: signupMode, account: Account, csrfToken: z.string(), hasPassword: z.boolean() }),
  ]),
);
/** Body of POST /v1/me/password. */
export const PasswordChangeBody = named(
  'PasswordChange',
  'Body of POST /v1/me/password; currentPassword is required once the account has a password.',
  z.strictObject({ currentPassword: z.string().max(1024).optional(), newPassword: password }),
);

// Webhooks (routes-webhooks.ts).

/** Longest receiver URL. */
export const MAX_WEBHOOK_URL = 2000;
const webhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
/** Body of POST /v1/webhooks. */
export const NewWebhookBody = named(
  'NewWebhook',
  'Body of POST /v1/webhooks.',
  z.strictObject({
    url: z
      .string()
      .min(1)
      .max(MAX_WEBHOOK_URL)
      .describe('the receiver: an https:// URL (http:// only with SVC_WEBHOOK_ALLOW_PRIVATE=true)'),
    events: z
      .array(webhookEventType)
      .max(WEBHOOK_EVENT_TYPES.length)
      .optional()
      .describe('event types to receive; absent or empty: every type'),
  }),
);
const deliveryState = z
  .enum(['pending', 'delivered', 'failed'])
  .describe('pending: not sent yet or waiting to be retried; delivered: a 2xx came back; failed: retries ran out (24 h)');
/** The newest delivery of a webhook, in listings. */
const LastDelivery = z.strictObject({
  id: z.string(),
  eventId: z.string(),
  eventType: webhookEventType,
  state: deliveryState,
  attempts: count,
  updatedAt: timestamp,
});
/** One webhook (GET /v1/webhooks items). */
export const Webhook = named(
  'Webhook',
  'A receiver of signed event deliveries; the signing secret is only ever returned by POST /v1/webhooks.',
  z.strictObject({
    id: z.string(),
    url: z.string(),
    events: z.array(webhookEventType).describe('the subscribed types; empty: every type'),
    createdAt: timestamp,
    lastDelivery: LastDelivery.nullable().describe('the newest delivery; null before the first event'),
  }),
);
/** GET /v1/webhooks. */
export const WebhookList = named('WebhookList', 'Webhooks of the account, newest first.', z.strictObject({ webhooks: z.array(Webhook) }));
/** POST /v1/webhooks (201). */
export const CreatedWebhook = named(
  'CreatedWebhook',
  'A new webhook with its signing secret, shown this once.',
  Webhook.extend({
    secret: z
      .string()
      .regex(/^whsec_/)
      .describe('Standard Webhooks signing secret (whsec_ + base64); store it now, it is not shown again'),
  }),
);
/** One attempt of a delivery. */
const DeliveryAttempt = z.strictObject({
  at: timestamp,
  statusCode: z.int().nullable().describe("the receiver's HTTP status; null when none came back"),
  error: z.string().nullable().describe('why no status came back (timeout, connection refused, private address…)'),
  durationMs: count,
});
/** One delivery: an event sent to a webhook, with every attempt. */
export const WebhookDelivery = named(
  'WebhookDelivery',
  'One event for one webhook and each attempt to send it.',
  z.strictObject({
    id: z.string(),
    eventId: z.string().describe('the event id, also the webhook-id header'),
    eventType: webhookEventType,
    state: deliveryState,
    createdAt: timestamp,
    nextAttemptAt: timestamp.nullable().describe('when it is sent next; null once delivered or failed'),
    attempts: z.array(DeliveryAttempt).describe('oldest first'),
  }),
);
/** GET /v1/webhooks/:id/deliveries. */
export const WebhookDeliveryList = named(
  'WebhookDeliveryList',
  'Deliveries of a webhook, newest first.',
  z.strictObject({ deliveries: z.array(WebhookDelivery) }),
);
/** Largest page of GET /v1/webhooks/:id/deliveries. */
export const DELIVERIES_MAX_LIMIT = 100;
/** Query of GET /v1/webhooks/:id/deliveries. */
export const DeliveryListQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(DELIVERIES_MAX_LIMIT)
    .optional()
    .describe(`page size, default 50, at most ${DELIVERIES_MAX_LIMIT}`),
});
/** Path parameters of the retry route. */
export const DeliveryParams = z.strictObject({ id: z.string().describe('webhook id'), deliveryId: z.string().describe('delivery id') });
