import { hostRewrite } from './host-header.js';
import type { InspectedTunnel, Inspector } from './inspector.js';
import { OriginProxy, type RequestLog } from './origin-proxy.js';
import { RoutedProxy, routeSpecs, type CheckedRoute } from './routes.js';
import type { BindRequest } from './session-tunnel.js';

/**
 * The forwarding of an HTTP tunnel: `main` alone without routes; with routes, a RoutedProxy over
 * one OriginProxy per route (its own connection pool, host rewrite, HTTP version and capture,
 * whose records name the route's target), and the routes added to the bind so the edge names
 * the right target too. Requests are counted and logged as the main target's are.
 */
export function routedProxy(
  main: OriginProxy,
  routes: readonly CheckedRoute[],
  request: BindRequest,
  onLog: (log: RequestLog) => void,
  inspector: Inspector | undefined,
  inspected: InspectedTunnel,
): OriginProxy | RoutedProxy {
  if (routes.length === 0) return main;
  request.routes = routeSpecs(routes);
  const proxies = routes.map((route) => {
    // The tunnel's url is known once bound: read through the main tunnel's record.
    const captured: InspectedTunnel = {
      get url() {
        return inspected.url;
      },
      target: route.target,
      ...(route.hostHeader !== undefined ? { hostHeader: route.hostHeader } : {}),
    };
    const proxy = new OriginProxy(route.target, onLog, hostRewrite(route.hostHeader, route.target), inspector?.tap(captured));
    return { path: route.path, proxy };
  });
  return new RoutedProxy(main, proxies);
}
