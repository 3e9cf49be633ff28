import {
  ErrorCode,
  MAX_ROUTE_LOCAL_LENGTH,
  RouteTable,
  routesFromJson,
  routesProblem,
  SvcError,
  type RouteSpec,
} from '@svcrouter/protocol';
import type { Binding } from './edge-session.js';

// Routes at the edge: the agent picks each request's local target by path; the edge runs the
// same matcher (protocol's RouteTable) over the routes the bind carried, to name that target in
// the Traffic Inspector record and on the 502 page. Tunnels without routes skip all of it.
// The routes also travel as JSON (`[{"path":…,"local":…}]`): in the tunnels row for the API, and
// in the cluster route for the other nodes, which label the requests they relay with them.

/** A bind's routes as kept: each `local` capped; undefined without any. Bad ones are refused (NAME_INVALID): the agent is not trusted. */
export function routeListOf(routes: RouteSpec[] | undefined): RouteSpec[] | undefined {
  if (routes === undefined) return undefined;
  const problem = routesProblem(routes);
  if (problem !== undefined) throw new SvcError(ErrorCode.NAME_INVALID, `invalid routes: ${problem}`);
  if (routes.length === 0) return undefined;
  return routes.map((route) => ({ path: route.path, local: route.local.slice(0, MAX_ROUTE_LOCAL_LENGTH) }));
}

/** A bind's routes as a table of `host:port`s; undefined without any. Bad ones are refused (NAME_INVALID). */
export function routeTableOf(routes: RouteSpec[] | undefined): RouteTable<string> | undefined {
  const list = routeListOf(routes);
  return list === undefined ? undefined : tableOf(list);
}

/** Routes kept as JSON, as a table; undefined for none or for text that is not a valid list. */
export function routeTableOfJson(json: string | undefined): RouteTable<string> | undefined {
  const list = routesFromJson(json);
  return list === undefined ? undefined : tableOf(list);
}

/** The target a request of `path` went to on `binding`: a route's, else the tunnel's own; undefined for a tunnel without routes. */
export function targetOf(binding: Binding | undefined, path: string): string | undefined {
  const routes = binding?.routes;
  if (routes === undefined) return undefined;
  return routes.match(path) ?? binding!.local;
}

function tableOf(list: readonly RouteSpec[]): RouteTable<string> {
  return new RouteTable(list.map((route) => ({ path: route.path, target: route.local })));
}
