import { MAX_ROUTES, duplicateRouteMessage, normalizeRoutePath } from '@svcrouter/protocol';
import { parseRouteFlag, routeProblem, type RouteOptions } from '@svcrouter/sdk';
import { z } from 'zod';

// A tunnel's `routes:` in svc.yml: a list whose entries are either the one-line form of
// `--route` (`/api=4000,host-header=rewrite`) or a map { path, addr, hostHeader?, proto? }.
// Checked by hand rather than as a zod union, whose errors only say "Invalid input".

/** The keys of a route written as a map. */
const ROUTE_KEYS = ['path', 'addr', 'hostHeader', 'proto'] as const;

/** `routes` as the schema takes it; routeOptionsOf reads each entry once checkRoutes passed. */
export const RoutesSchema = z.array(z.unknown()).max(MAX_ROUTES, `at most ${MAX_ROUTES} routes per tunnel`);

/** One entry of `routes` as forward() takes it, or the sentence saying what is wrong, with the key at fault. */
export function routeEntry(entry: unknown): RouteOptions | { key?: string; message: string } {
  if (typeof entry === 'string') {
    const parsed = parseRouteFlag(entry);
    return typeof parsed === 'string' ? { message: parsed } : parsed;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    return { message: 'expected "<path>=<target>" or a map with path and addr' };
  const map = entry as Record<string, unknown>;
  for (const key of Object.keys(map)) {
    if (!(ROUTE_KEYS as readonly string[]).includes(key))
      return { key, message: `unknown key (expected one of: ${ROUTE_KEYS.join(', ')})` };
  }
  if (map.path === undefined) return { key: 'path', message: 'required' };
  if (map.addr === undefined) return { key: 'addr', message: 'required' };
  if (typeof map.path !== 'string') return { key: 'path', message: 'expected a path such as /api' };
  if (typeof map.addr !== 'string' && typeof map.addr !== 'number') return { key: 'addr', message: 'expected a port, host:port or URL' };
  for (const key of ['hostHeader', 'proto'] as const) {
    if (map[key] !== undefined && typeof map[key] !== 'string') return { key, message: 'expected a string' };
  }
  const route: RouteOptions = { path: map.path, addr: map.addr };
  if (map.hostHeader !== undefined) route.hostHeader = map.hostHeader as string;
  if (map.proto !== undefined) route.proto = map.proto as RouteOptions['proto'];
  const problem = routeProblem(route);
  return problem === undefined ? route : { message: problem };
}

/** Adds an issue for each bad route and each repeated path (at the repeat), under `routes.<index>`. */
export function checkRoutes(routes: readonly unknown[], context: z.RefinementCtx): void {
  const seen = new Set<string>();
  for (const [index, entry] of routes.entries()) {
    const route = routeEntry(entry);
    if ('message' in route) {
      const path = route.key === undefined ? ['routes', index] : ['routes', index, route.key];
      context.addIssue({ code: 'custom', message: route.message, path });
      continue;
    }
    const key = normalizeRoutePath(route.path);
    if (seen.has(key)) context.addIssue({ code: 'custom', message: duplicateRouteMessage(key), path: ['routes', index] });
    seen.add(key);
  }
}

/** The routes of a tunnel that passed checkRoutes, as forward() takes them. */
export function routeOptionsOf(routes: readonly unknown[] | undefined): RouteOptions[] | undefined {
  return routes?.map((entry) => routeEntry(entry) as RouteOptions);
}
