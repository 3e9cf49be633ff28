import type { Logger } from 'pino';
import { z } from 'zod';
import { SVC_VERSION } from '@svcrouter/protocol';
import { definePublicRoute } from './define-route.js';
import { ApiErrorCode } from './errors.js';
import { ApiError, sendJson, type ApiRequest, type ApiResponse } from './http-io.js';
import { buildOpenApi, type JsonObject, type OpenApiInfo } from './openapi.js';
import { authenticateRequest, checkCsrf, type Authenticate, type ResolveSession } from './request-auth.js';
import { matchRoute, type AnyRoute, type PublicRoute } from './router.js';
import { isStoreUnavailable, STORE_RETRY_AFTER_SECONDS } from '../store/index.js';

export type { Authenticate, ResolveSession };

/** What the front door needs. */
export interface ApiDeps {
  authenticate: Authenticate;
  /** The dashboard's session cookie, accepted in place of a token; absent: tokens only. */
  resolveSession?: ResolveSession;
  /** The route table: authenticated routes, and public ones (`public: true`) such as health checks. */
  routes: readonly AnyRoute[];
  log: Logger;
  /** The dashboard: apex paths outside /v1 that no route claims; answers true when it handled the request. */
  dashboard?(req: ApiRequest, res: ApiResponse, pathname: string): boolean;
  /** OpenAPI info; default title "svcRouter API" and the server version. */
  info?: OpenApiInfo;
}

/** Path of the OpenAPI document; public, so tools can read it before they hold a token. */
export const OPENAPI_PATH = '/v1/openapi.json';

const UNAUTHORIZED = { error: ApiErrorCode.UNAUTHORIZED };

/**
 * The REST API's front door: public routes, authentication, routing, and the single place
 * where errors become responses. Handlers throw ApiError for expected failures; anything else
 * is logged once here and answered as a plain 500 without details, or as 503 with Retry-After
 * when the store is passing through a fault (store-unavailable.ts).
 *
 * Order: a public route answers without credentials; any other /v1 path needs a valid token
 * (or session cookie, under the CSRF rule) before it is routed, so an unauthenticated caller
 * cannot probe which paths or ids exist.
 */
export function createApi(deps: ApiDeps): (req: ApiRequest, res: ApiResponse) => void {
  const table: AnyRoute[] = [...deps.routes];
  let document: JsonObject | undefined;
  table.push(openApiRoute(() => (document ??= buildOpenApi(table, deps.info ?? { title: 'svcRouter API', version: SVC_VERSION }))));

  return (req, res) => {
    const started = performance.now();
    const entry: { accountId?: string } = {};
    res.once('finish', () => {
      // Path only: never headers (Authorization) and never the query string.
      const path = (req.url ?? '/').split('?')[0];
      deps.log.debug(
        { method: req.method, path, status: res.statusCode, ms: Math.round(performance.now() - started), ...entry },
        'api request',
      );
    });
    void handle(req, res, entry).catch((error: unknown) => respondError(res, error));
  };

  async function handle(req: ApiRequest, res: ApiResponse, entry: { accountId?: string }): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://apex');
    // HEAD is GET without a body (Node drops the body of a HEAD answer).
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    const match = matchRoute(table, method, url.pathname);
    if (match.kind === 'found' && match.route.public) {
      return match.route.handler({ req, res, params: match.params, query: url.searchParams });
    }
    if (url.pathname !== '/v1' && !url.pathname.startsWith('/v1/')) {
      if (match.kind === 'method-not-allowed') throw methodNotAllowed(res, req.method, match.allowed);
      if (deps.dashboard?.(req, res, url.pathname)) return;
      throw new ApiError(404, ApiErrorCode.NOT_FOUND, `no route for ${req.method} ${url.pathname}`);
    }
    const identity = await authenticateRequest(req, deps.authenticate, deps.resolveSession);
    if (!identity) return sendJson(res, 401, UNAUTHORIZED);
    entry.accountId = identity.account.id;
    if (identity.session) checkCsrf(req, identity.session);
    if (match.kind === 'not-found') throw new ApiError(404, ApiErrorCode.NOT_FOUND, `no route for ${req.method} ${url.pathname}`);
    if (match.kind === 'method-not-allowed') throw methodNotAllowed(res, req.method, match.allowed);
    const ctx = { req, res, params: match.params, query: url.searchParams };
    if (match.route.public) return match.route.handler(ctx);
    await match.route.handler({ ...ctx, account: identity.account, key: identity.key, session: identity.session });
  }

  function respondError(res: ApiResponse, error: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (error instanceof ApiError) {
      sendJson(res, error.status, { error: error.code, message: error.message });
      return;
    }
    if (isStoreUnavailable(error)) {
      deps.log.warn({ err: error }, 'store unavailable; answered 503');
      res.setHeader('retry-after', String(STORE_RETRY_AFTER_SECONDS));
      sendJson(res, 503, { error: ApiErrorCode.UNAVAILABLE, message: 'the store is busy or restarting; retry shortly' });
      return;
    }
    deps.log.error({ err: error }, 'api handler failed');
    sendJson(res, 500, { error: ApiErrorCode.INTERNAL, message: 'the server could not complete the request' });
  }
}

function methodNotAllowed(res: ApiResponse, method: string | undefined, allowed: string[]): ApiError {
  res.setHeader('allow', allowed.join(', '));
  return new ApiError(405, ApiErrorCode.METHOD_NOT_ALLOWED, `${method} is not allowed here; use ${allowed.join(' or ')}`);
}

function openApiRoute(document: () => JsonObject): PublicRoute {
  return definePublicRoute({
    method: 'GET',
    path: OPENAPI_PATH,
    tag: 'meta',
    summary: 'This OpenAPI 3.1 document (no token needed)',
    status: 200,
    response: z.record(z.string(), z.unknown()),
    responseDescription: 'the OpenAPI document',
    async handler() {
      return document();
    },
  });
}
