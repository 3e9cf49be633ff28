import { checkedRoutes, parseRouteFlag, type RouteOptions } from '@svcrouter/sdk';

/** The `--route` flags of `svc http`, each parsed, then checked together (count, repeated paths); a problem is its sentence. */
export function parseRouteFlags(flags: readonly string[]): RouteOptions[] | string {
  const routes: RouteOptions[] = [];
  for (const flag of flags) {
    const route = parseRouteFlag(flag);
    if (typeof route === 'string') return route;
    routes.push(route);
  }
  try {
    checkedRoutes(routes);
  } catch (error) {
    return (error as Error).message;
  }
  return routes;
}
