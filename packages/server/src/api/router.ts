import type { z } from 'zod';
import type { Account, DashboardSession, KeyRecord } from '../store/index.js';
import type { ApiRequest, ApiResponse } from './http-io.js';

/** Everything a public route handler gets (no credentials were checked). */
export interface PublicRouteContext {
  req: ApiRequest;
  res: ApiResponse;
  params: Record<string, string>;
  query: URLSearchParams;
}

/** Everything an authenticated route handler gets: the account, and the token or dashboard session that proved it. */
export interface RouteContext extends PublicRouteContext {
  account: Account;
  /** Set when a Bearer token authenticated the request. */
  key?: KeyRecord | undefined;
  /** Set when the dashboard's session cookie authenticated the request. */
  session?: DashboardSession | undefined;
}

/** HTTP methods the API routes on. */
export type RouteMethod = 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT';

/** One documented response of a route (OpenAPI), validated before it is sent. */
export interface ResponseDoc {
  description: string;
  /** Absent for bodiless responses (204). */
  schema?: z.ZodType;
  /** Default application/json. */
  contentType?: string;
}

/** What OpenAPI says about a route; built by defineRoute from the schemas that validate. */
export interface RouteDoc {
  summary: string;
  description?: string;
  tags: string[];
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** Success and other non-error responses by status. */
  responses: Record<number, ResponseDoc>;
  /** Error statuses the route can answer (bodies are the Error shape). */
  errors: number[];
}

/** One API route behind the bearer token; `path` uses `:name` segments. */
export interface Route {
  method: RouteMethod;
  path: string;
  public?: false;
  handler(ctx: RouteContext): Promise<void>;
  /** Absent on hand-written routes; OpenAPI then lists the route with its error responses only. */
  doc?: RouteDoc;
}

/** A route answered without credentials (health, metrics, the OpenAPI document). */
export interface PublicRoute {
  method: RouteMethod;
  path: string;
  public: true;
  handler(ctx: PublicRouteContext): Promise<void>;
  doc?: RouteDoc;
}

/** Any entry of the route table. */
export type AnyRoute = Route | PublicRoute;

/** The outcome of matching a request against the route table. */
export type RouteMatch<R> =
  { kind: 'found'; route: R; params: Record<string, string> } | { kind: 'method-not-allowed'; allowed: string[] } | { kind: 'not-found' };

/** Matches method and path (exact segments, `:param` captures one non-empty segment). */
export function matchRoute<R extends { method: string; path: string }>(
  routes: readonly R[],
  method: string,
  pathname: string,
): RouteMatch<R> {
  const segments = pathname.split('/').filter(Boolean);
  const allowed: string[] = [];
  for (const route of routes) {
    const params = matchPath(route.path, segments);
    if (!params) continue;
    if (route.method === method) return { kind: 'found', route, params };
    if (!allowed.includes(route.method)) allowed.push(route.method);
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
