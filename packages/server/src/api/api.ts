import type { Logger } from 'pino';
import type { Authenticate } from '../edge/session-acceptor.js';
import { ApiError, sendJson, type ApiRequest, type ApiResponse } from './http-io.js';
import { matchRoute, type Route } from './router.js';

export interface ApiDeps {
  authenticate: Authenticate;
  routes: Route[];
  log: Logger;
  /** Non-/v1 apex paths (health, metrics, dashboard); answers true when it handled the request. */
  fallback?(req: ApiRequest, res: ApiResponse, pathname: string): boolean;
}

const UNAUTHORIZED = { error: 'unauthorized' };

/**
 * The REST API's front door: authentication, routing, and the single place where errors
 * become responses. Handlers throw ApiError for expected failures; anything else is logged
 * once here and answered as a plain 500 without details.
 */
export function createApi(deps: ApiDeps): (req: ApiRequest, res: ApiResponse) => void {
  return (req, res) => {
    void handle(req, res).catch((error: unknown) => respondError(res, error));
  };

  async function handle(req: ApiRequest, res: ApiResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://apex');
    if (!url.pathname.startsWith('/v1/') && url.pathname !== '/v1') {
      if (deps.fallback?.(req, res, url.pathname)) return;
      throw new ApiError(404, 'not_found', `no route for ${req.method} ${url.pathname}`);
    }
    const identity = await deps.authenticate(req.headers.authorization);
    if (!identity) return sendJson(res, 401, UNAUTHORIZED);
    const match = matchRoute(deps.routes, req.method ?? 'GET', url.pathname);
    if (match.kind === 'not-found') throw new ApiError(404, 'not_found', `no route for ${req.method} ${url.pathname}`);
    if (match.kind === 'method-not-allowed') {
      res.setHeader('allow', match.allowed.join(', '));
      throw new ApiError(405, 'method_not_allowed', `${req.method} is not allowed here; use ${match.allowed.join(' or ')}`);
    }
    await match.route.handler({ req, res, account: identity.account, key: identity.key, params: match.params, query: url.searchParams });
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
    deps.log.error({ err: error }, 'api handler failed');
    sendJson(res, 500, { error: 'internal', message: 'the server could not complete the request' });
  }
}
