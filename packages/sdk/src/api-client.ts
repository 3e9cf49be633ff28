import { call, withTextStatus, type Endpoint } from './api-transport.js';
import type { paths } from './generated/api-types.js';
import type {
  Account,
  CapturedRequest,
  CreatedKey,
  CreatedWebhook,
  DeliveryQuery,
  Domain,
  DomainCheck,
  TcpAddress,
  Key,
  NewKey,
  PasswordChange,
  RequestFilters,
  RequestPage,
  RequestStreamEvent,
  StreamFilters,
  TunnelInfo,
  Usage,
  UsageHistory,
  UsageRange,
  NewWebhook,
  Webhook,
  WebhookDelivery,
} from './api-types.js';
import { DEFAULT_SERVER_URL, envDefault } from './env-defaults.js';
import { followRequests } from './request-stream.js';

export { ApiError, ClientErrorCode } from './api-error.js';

/** Options of ApiClient. */
export interface ApiClientOptions {
  /** Apex URL of svc-server (default SVC_SERVER, else http://localhost:8080). */
  baseUrl?: string;
  /** Agent token `svc_…` (default SVC_TOKEN). */
  token?: string;
}

/**
 * Typed client for the REST API (`/v1/...`). Every method resolves with the API's JSON, typed
 * from the OpenAPI document, and rejects with ApiError (`status`, `code`, `message`).
 */
export class ApiClient {
  /** Apex URL the client talks to, without a trailing slash. */
  readonly baseUrl: string;
  // A #private field: the token stays out of console.log(client) and JSON.stringify(client).
  readonly #endpoint: Endpoint;

  constructor(options: ApiClientOptions = {}) {
    const token = options.token ?? envDefault('SVC_TOKEN');
    if (!token) throw new TypeError('ApiClient needs a token: pass { token } or set SVC_TOKEN');
    this.baseUrl = (options.baseUrl ?? envDefault('SVC_SERVER') ?? DEFAULT_SERVER_URL).replace(/\/+$/, '');
    this.#endpoint = { baseUrl: this.baseUrl, token };
  }

  /** GET /v1/me: the account the token belongs to. */
  me(): Promise<Account> {
    return call(this.#endpoint, 'get', '/v1/me', {});
  }

  /** GET /v1/usage: plan limits and this month's consumption. */
  usage(): Promise<Usage> {
    return call(this.#endpoint, 'get', '/v1/usage', {});
  }

  /** GET /v1/usage/history: daily rollups, newest first; without a range, every retained day. */
  usageHistory(range: UsageRange = {}): Promise<UsageHistory> {
    return call(this.#endpoint, 'get', '/v1/usage/history', { query: range });
  }

  /**
   * POST /v1/me/password: sets the dashboard password (`currentPassword` must match once one is
   * set, else ApiError 403 invalid_credentials); the account's other browsers are signed out.
   */
  setPassword(change: PasswordChange): Promise<void> {
    return call(this.#endpoint, 'post', '/v1/me/password', { body: change });
  }

  /** GET /v1/openapi.json: the OpenAPI 3.1 document these types were generated from. */
  openapi(): Promise<Record<string, unknown>> {
    return call(this.#endpoint, 'get', '/v1/openapi.json', {});
  }

  readonly tunnels = {
    /** GET /v1/tunnels */
    list: async (): Promise<TunnelInfo[]> => (await call(this.#endpoint, 'get', '/v1/tunnels', {})).tunnels,
    /** DELETE /v1/tunnels/:id: releases the tunnel (its agent exits) and frees the name. */
    delete: (id: string): Promise<void> => call(this.#endpoint, 'delete', '/v1/tunnels/{id}', { path: { id } }),
  };

  readonly requests = {
    /** GET /v1/requests: one page, newest first; pass `nextCursor` back as `cursor` for the next. */
    list: (filters: RequestFilters = {}): Promise<RequestPage> =>
      call(this.#endpoint, 'get', '/v1/requests', { query: withTextStatus(filters) }),
    /** Every matching request, newest first, fetching page after page as the loop asks. */
    all: (filters: Omit<RequestFilters, 'cursor'> = {}): AsyncGenerator<CapturedRequest> => this.allRequests(filters),
    /**
     * Live records from GET /v1/requests/stream as they finish. Abort `signal` to stop; a
     * `break` out of the loop closes the connection too.
     */
    stream: (filters: StreamFilters = {}, options: { signal?: AbortSignal } = {}): AsyncGenerator<RequestStreamEvent> =>
      followRequests(this.#endpoint, filters, options.signal),
  };

  readonly domains = {
    /** GET /v1/domains */
    list: async (): Promise<Domain[]> => (await call(this.#endpoint, 'get', '/v1/domains', {})).domains,
    /** POST /v1/domains: answers with the TXT record to publish. */
    create: (host: string): Promise<Domain> => call(this.#endpoint, 'post', '/v1/domains', { body: { host } }),
    /** GET /v1/domains/:id */
    get: (id: string): Promise<Domain> => call(this.#endpoint, 'get', '/v1/domains/{id}', { path: { id } }),
    /** POST /v1/domains/:id/verify: checks the TXT record now; `verification` says what was found. */
    verify: (id: string): Promise<DomainCheck> => call(this.#endpoint, 'post', '/v1/domains/{id}/verify', { path: { id } }),
    /** DELETE /v1/domains/:id: closes tunnels on it and forgets its certificates. */
    delete: (id: string): Promise<void> => call(this.#endpoint, 'delete', '/v1/domains/{id}', { path: { id } }),
  };

  readonly tcpAddresses = {
    /** GET /v1/tcp-addresses */
    list: async (): Promise<TcpAddress[]> => (await call(this.#endpoint, 'get', '/v1/tcp-addresses', {})).tcpAddresses,
    /** POST /v1/tcp-addresses: reserves a free port of the server's range for the account. */
    reserve: (): Promise<TcpAddress> => call(this.#endpoint, 'post', '/v1/tcp-addresses', { body: {} }),
    /** DELETE /v1/tcp-addresses/:id: closes a tunnel bound on it and frees the port. */
    delete: async (id: string): Promise<void> => {
      await call(this.#endpoint, 'delete', '/v1/tcp-addresses/{id}', { path: { id } });
    },
  };

  readonly keys = {
    /** GET /v1/keys: active tokens, metadata only. */
    list: async (): Promise<Key[]> => (await call(this.#endpoint, 'get', '/v1/keys', {})).keys,
    /** POST /v1/keys: the answer's `token` is the secret, shown this once. */
    create: (options: NewKey = {}): Promise<CreatedKey> => call(this.#endpoint, 'post', '/v1/keys', { body: options }),
    /** DELETE /v1/keys/:id: the token stops working at once. */
    delete: (id: string): Promise<void> => call(this.#endpoint, 'delete', '/v1/keys/{id}', { path: { id } }),
  };

  readonly webhooks = {
    /** GET /v1/webhooks: with each one's last delivery; never the secret. */
    list: async (): Promise<Webhook[]> => (await call(this.#endpoint, 'get', '/v1/webhooks', {})).webhooks,
    /** POST /v1/webhooks: the answer's `secret` (whsec_…) signs every delivery; shown this once. */
    create: (options: NewWebhook): Promise<CreatedWebhook> => call(this.#endpoint, 'post', '/v1/webhooks', { body: options }),
    /** DELETE /v1/webhooks/:id: pending deliveries are dropped with it. */
    delete: (id: string): Promise<void> => call(this.#endpoint, 'delete', '/v1/webhooks/{id}', { path: { id } }),
    /** GET /v1/webhooks/:id/deliveries: newest first, each with its attempts. */
    deliveries: async (id: string, query: DeliveryQuery = {}): Promise<WebhookDelivery[]> =>
      (await call(this.#endpoint, 'get', '/v1/webhooks/{id}/deliveries', { path: { id }, query })).deliveries,
    /** POST /v1/webhooks/:id/deliveries/:deliveryId/retry: sends the delivery again now. */
    retry: (id: string, deliveryId: string): Promise<void> =>
      call(this.#endpoint, 'post', '/v1/webhooks/{id}/deliveries/{deliveryId}/retry', { path: { id, deliveryId } }),
  };

  private async *allRequests(filters: Omit<RequestFilters, 'cursor'>): AsyncGenerator<CapturedRequest> {
    let cursor: string | undefined;
    do {
      const page: RequestPage = await this.requests.list({ ...filters, cursor });
      yield* page.requests;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
}

/** `METHOD /v1/path` of every operation of the OpenAPI document under /v1. */
type V1Operation = {
  [P in keyof paths]: P extends `/v1/${string}`
    ? `${Uppercase<Extract<keyof paths[P], 'get' | 'put' | 'post' | 'patch' | 'delete'>>} ${P}`
    : never;
}[keyof paths];

/**
 * The operations ApiClient has a method for. A /v1 route the server adds reaches the generated
 * types, and then the check below fails the build until the client covers it; one it removes
 * fails it too.
 */
type Covered =
  | 'GET /v1/me'
  | 'POST /v1/me/password'
  | 'GET /v1/usage'
  | 'GET /v1/usage/history'
  | 'GET /v1/tunnels'
  | 'DELETE /v1/tunnels/{id}'
  | 'GET /v1/requests'
  | 'GET /v1/requests/stream'
  | 'GET /v1/domains'
  | 'POST /v1/domains'
  | 'GET /v1/domains/{id}'
  | 'POST /v1/domains/{id}/verify'
  | 'DELETE /v1/domains/{id}'
  | 'GET /v1/tcp-addresses'
  | 'POST /v1/tcp-addresses'
  | 'DELETE /v1/tcp-addresses/{id}'
  | 'GET /v1/keys'
  | 'POST /v1/keys'
  | 'DELETE /v1/keys/{id}'
  | 'GET /v1/webhooks'
  | 'POST /v1/webhooks'
  | 'DELETE /v1/webhooks/{id}'
  | 'GET /v1/webhooks/{id}/deliveries'
  | 'POST /v1/webhooks/{id}/deliveries/{deliveryId}/retry'
  | 'GET /v1/openapi.json';

/** Accepts only `never`: given operations, the build fails and names them. */
type NoneLeft<Operations extends never> = Operations;
/** Always `never`: the build fails here while a /v1 operation has no ApiClient method. */
export type UncoveredOperations = NoneLeft<Exclude<V1Operation, Covered>>;
/** Always `never`: the build fails here while the list names an operation the API no longer has. */
export type StaleOperations = NoneLeft<Exclude<Covered, V1Operation>>;
