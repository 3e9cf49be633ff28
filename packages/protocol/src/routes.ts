/*
 * Routes: one hostname, several local services by path. A tunnel's bind may carry `routes`, each a
 * path prefix and the `host:port` of the local service it goes to; the rest goes to the tunnel's
 * own (main) target. The agent picks the target of each request with RouteTable; the edge uses the
 * same table to name the target in its Traffic Inspector record and on its 502 page, so both
 * sides always agree on which target a request went to.
 */

/** A route as the bind message carries it. */
export interface RouteSpec {
  /** Path prefix, normalised (see normalizeRoutePath). */
  path: string;
  /** `host:port` of the local service, as shown on the 502 page and in the inspector's `target`. */
  local: string;
}

/** Most routes per tunnel: a matcher scans them per request, and each holds an origin connection pool. */
export const MAX_ROUTES = 32;
/** Longest route path, in characters. */
export const MAX_ROUTE_PATH_LENGTH = 256;
/** Longest `local` of a route the edge keeps (the agent's word, shown on pages): as a tunnel's own. */
export const MAX_ROUTE_LOCAL_LENGTH = 200;

/** The characters RFC 3986 allows in a path; no query, fragment, space or control character. */
const PATH_SHAPE = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;

/**
 * A route path as matched: without trailing slashes, so `/api/` and `/api` are one route, which
 * matches `/api`, `/api/` and everything under them.
 */
export function normalizeRoutePath(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 0x2f) end--;
  return end === path.length ? path : path.slice(0, end);
}

/** Why `path` cannot be a route's path, or undefined when it can. */
export function routePathProblem(path: unknown): string | undefined {
  if (typeof path !== 'string' || path === '') return 'a route needs a path, such as /api';
  const shown = JSON.stringify(path.length > 60 ? `${path.slice(0, 60)}…` : path);
  if (path.length > MAX_ROUTE_PATH_LENGTH) return `route path ${shown} is longer than ${MAX_ROUTE_PATH_LENGTH} characters`;
  if (!path.startsWith('/')) return `invalid route path ${shown}: must start with /`;
  if (!PATH_SHAPE.test(path)) return `invalid route path ${shown}: only URL path characters (no spaces, ? or #)`;
  const normalized = normalizeRoutePath(path);
  if (normalized === '/') return `route path ${shown} is the whole site: the main target serves it`;
  if (normalized.includes('//')) return `invalid route path ${shown}: empty segment (//)`;
  if (/\/\.\.?(?:\/|$)/.test(normalized)) return `invalid route path ${shown}: no . or .. segments`;
  return undefined;
}

/**
 * Why a tunnel's list of routes cannot be bound, or undefined: too many, a bad path, a bad
 * `local`, or two routes of one path (after normalisation).
 */
export function routesProblem(routes: unknown): string | undefined {
  if (!Array.isArray(routes)) return 'routes must be a list';
  if (routes.length > MAX_ROUTES) return `at most ${MAX_ROUTES} routes per tunnel, not ${routes.length}`;
  const seen = new Set<string>();
  for (const route of routes as unknown[]) {
    if (typeof route !== 'object' || route === null) return 'each route needs a path and a local target';
    const { path, local } = route as Partial<RouteSpec>;
    const problem = routePathProblem(path);
    if (problem !== undefined) return problem;
    if (typeof local !== 'string' || local === '' || local.length > MAX_ROUTE_LOCAL_LENGTH)
      return `route ${path!}: the local target must be host:port`;
    const key = normalizeRoutePath(path!);
    if (seen.has(key)) return duplicateRouteMessage(key);
    seen.add(key);
  }
  return undefined;
}

/**
 * Routes kept as JSON (`[{"path":…,"local":…}]`, as the edge stores them with a tunnel), read
 * back: undefined for none, and for text that is not a valid list (stored text is never trusted
 * to be well formed).
 */
export function routesFromJson(json: string | undefined): RouteSpec[] | undefined {
  if (json === undefined || json === '') return undefined;
  let routes: unknown;
  try {
    routes = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (routesProblem(routes) !== undefined || (routes as unknown[]).length === 0) return undefined;
  return (routes as RouteSpec[]).map((route) => ({ path: route.path, local: route.local }));
}

/** The message for two routes of one path. */
export function duplicateRouteMessage(path: string): string {
  return `route path ${JSON.stringify(path)} is given twice`;
}

/**
 * Picks a request's route: the longest route path that is a prefix of the request's path on a
 * segment boundary (`/api` takes `/api`, `/api/x` and `/api?q`, never `/apix`); undefined: the
 * main target. Paths compare as sent, case-sensitively and without percent-decoding. Matching
 * allocates nothing: routes are sorted longest first once, and each is a startsWith and one
 * character code.
 */
export class RouteTable<T> {
  private readonly prefixes: string[];
  private readonly targets: T[];

  constructor(routes: ReadonlyArray<{ readonly path: string; readonly target: T }>) {
    const sorted = routes
      .map((route) => ({ path: normalizeRoutePath(route.path), target: route.target }))
      .sort((a, b) => b.path.length - a.path.length);
    this.prefixes = sorted.map((route) => route.path);
    this.targets = sorted.map((route) => route.target);
  }

  /** How many routes the table holds. */
  get size(): number {
    return this.prefixes.length;
  }

  /** The target of the longest route matching `requestPath` (path and query), or undefined. */
  match(requestPath: string): T | undefined {
    const prefixes = this.prefixes;
    for (let i = 0; i < prefixes.length; i++) {
      const prefix = prefixes[i]!;
      if (!requestPath.startsWith(prefix)) continue;
      if (requestPath.length === prefix.length) return this.targets[i];
      const next = requestPath.charCodeAt(prefix.length);
      // `/` starts a sub-path, `?` the query: both stay on the route; any other character is
      // another segment name (`/apix`).
      if (next === 0x2f || next === 0x3f) return this.targets[i];
    }
    return undefined;
  }
}
