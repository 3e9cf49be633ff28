import type { Account, KeyRecord } from '../store/index.js';
import type { ApiRequest, ApiResponse } from './http-io.js';

/** Everything a route handler gets. */
export interface RouteContext {
  req: ApiRequest;
  res: ApiResponse;
  account: Account;
  key: KeyRecord;
  params: Record<string, string>;
  query: URLSearchParams;
}

/** One API route; `path` uses `:name` segments. */
export interface Route {
  method: 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT';
  path: string;
  handler(ctx: RouteContext): Promise<void>;
}

/** The outcome of matching a request against the route table. */
export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

/** Matches method and path (exact segments, `:param` captures one non-empty segment). */
export function matchRoute(routes: readonly Route[], method: string, pathname: string): RouteMatch {
  const segments = pathname.split('/').filter(Boolean);
  const allowed: string[] = [];
  for (const route of routes) {
    const params = matchPath(route.path, segments);
    if (!params) continue;
    if (route.method === method) return { kind: 'found', route, params };
    allowed.push(route.method);
  }
  return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
}

function matchPath(pattern: string, segments: string[]): Record<string, string> | undefined {
  const parts = pattern.split('/').filter(Boolean);
  if (parts.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const segment = segments[i]!;
    if (part.startsWith(':')) {
      try {
        params[part.slice(1)] = decodeURIComponent(segment);
      } catch {
        return undefined;
      }
    } else if (part !== segment) {
      return undefined;
    }
  }
  return params;
}
