import {
  duplicateRouteMessage,
  ErrorCode,
  MAX_ROUTES,
  normalizeRoutePath,
  routePathProblem,
  RouteTable,
  SvcError,
  type CallbackStream,
  type RequestHead,
  type RouteSpec,
} from '@svcrouter/protocol';
import { hostHeaderProblem } from './host-header.js';
import { isOriginProto, parseLocalTarget, type LocalTarget, type OriginProto } from './local-target.js';
import type { OriginProxy } from './origin-proxy.js';

// Routes on the agent's side: a tunnel's paths served by other local services than its main
// target. The matcher is the protocol's RouteTable, which the edge uses too.

/** One route of forward()'s `routes`: requests whose path starts with `path` go to `addr`. */
export interface RouteOptions {
  /** Path prefix, matched on segment boundaries (`/api` takes `/api/x`, not `/apix`); a trailing `/` is dropped. */
  path: string;
  /** Local service: a port, `host:port`, an http(s) URL or `h2c://host:port`. */
  addr: string | number;
  /** Host header sent to this route's service, as forward()'s `hostHeader` (default: the public host). */
  hostHeader?: string;
  /** HTTP version spoken to this route's service: `http1` (default) or `h2`. */
  proto?: OriginProto;
}

/** A route checked before dialling: its normalised path and parsed target. */
export interface CheckedRoute {
  path: string;
  target: LocalTarget;
  hostHeader: string | undefined;
}

/**
 * Parses the one-line form `--route <path>=<target>[,host-header=rewrite|<host>][,proto=h2]`
 * (the config file's string form too). The path ends at the first `=`. Returns the sentence
 * saying what is wrong instead of throwing.
 */
export function parseRouteFlag(text: string): RouteOptions | string {
  const equals = text.indexOf('=');
  if (equals <= 0) return `invalid route "${text}": expected <path>=<target>, such as /api=4000`;
  const [addr, ...options] = text.slice(equals + 1).split(',');
  const route: RouteOptions = { path: text.slice(0, equals), addr: addr!.trim() };
  for (const option of options) {
    const [key, value = ''] = splitOnce(option.trim(), '=');
    if (key === 'host-header') route.hostHeader = value;
    else if (key === 'proto') route.proto = value as OriginProto;
    else return `invalid route "${text}": unknown option "${key}" (expected host-header or proto)`;
  }
  return routeProblem(route) ?? route;
}

/** Why one route cannot be used, as a sentence naming it; undefined when it can. */
export function routeProblem(route: RouteOptions): string | undefined {
  const pathProblem = routePathProblem(route.path);
  if (pathProblem !== undefined) return pathProblem;
  const name = `route ${route.path}`;
  if (route.addr === '' || route.addr === undefined) return `${name}: a target is needed, such as 4000 or localhost:4000`;
  if (route.proto !== undefined && !isOriginProto(route.proto)) return `${name}: proto takes "http1" or "h2", not "${String(route.proto)}"`;
  const target = parseLocalTarget(route.addr, route.proto);
  if (typeof target === 'string') return `${name}: ${target}`;
  if (route.hostHeader !== undefined) {
    const problem = hostHeaderProblem(route.hostHeader);
    if (problem !== undefined) return `${name}: ${problem}`;
  }
  return undefined;
}

/** Checks a tunnel's routes (count, each route, duplicate paths); a problem is SvcError NAME_INVALID. */
export function checkedRoutes(routes: readonly RouteOptions[] | undefined): CheckedRoute[] {
  if (routes === undefined || routes.length === 0) return [];
  if (routes.length > MAX_ROUTES)
    throw new SvcError(ErrorCode.NAME_INVALID, `at most ${MAX_ROUTES} routes per tunnel, not ${routes.length}`);
  const seen = new Set<string>();
  return routes.map((route) => {
    const problem = routeProblem(route);
    if (problem !== undefined) throw new SvcError(ErrorCode.NAME_INVALID, problem);
    const path = normalizeRoutePath(route.path);
    if (seen.has(path)) throw new SvcError(ErrorCode.NAME_INVALID, duplicateRouteMessage(path));
    seen.add(path);
    return { path, target: parseLocalTarget(route.addr, route.proto) as LocalTarget, hostHeader: route.hostHeader };
  });
}

/** The routes as the bind carries them: path and `host:port`. */
export function routeSpecs(routes: readonly CheckedRoute[]): RouteSpec[] {
  return routes.map((route) => ({ path: route.path, local: route.target.hostPort }));
}

/**
 * A tunnel's forwarding when it has routes: each request goes to the OriginProxy of its route,
 * or to the main one. A tunnel without routes uses its OriginProxy directly and pays nothing.
 */
export class RoutedProxy {
  private readonly table: RouteTable<OriginProxy>;
  private readonly routeProxies: OriginProxy[];

  constructor(
    private readonly main: OriginProxy,
    routes: ReadonlyArray<{ path: string; proxy: OriginProxy }>,
  ) {
    this.table = new RouteTable(routes.map((route) => ({ path: route.path, target: route.proxy })));
    this.routeProxies = routes.map((route) => route.proxy);
  }

  /** Serves one visitor stream (a WebSocket upgrade too) through the proxy of its route. */
  handle(stream: CallbackStream): void {
    (this.table.match((stream.meta as RequestHead).p) ?? this.main).handle(stream);
  }

  /** Closes every target's pooled connections. */
  async close(): Promise<void> {
    await Promise.all([this.main.close(), ...this.routeProxies.map((proxy) => proxy.close())]);
  }
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}
