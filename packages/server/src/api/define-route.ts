import { z } from 'zod';
import type { Account, DashboardSession, KeyRecord } from '../store/index.js';
import { readJson, sendEmpty, sendJson, sendText, type ApiRequest, type ApiResponse } from './http-io.js';
import type { PublicRoute, ResponseDoc, Route, RouteDoc, RouteMethod } from './router.js';
import { parsePart, queryObject } from './validation.js';

const NONE = z.strictObject({});
type None = typeof NONE;

/** A non-default response a handler picks (e.g. /readyz answering 503); validated like the success one. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/** What a handler receives: the validated, typed parts of the request. */
export interface HandlerInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: ApiRequest;
  /** For headers beside the body (Set-Cookie); the body itself is the handler's return value. */
  res: ApiResponse;
}

interface SpecBase<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType, R extends z.ZodType> {
  method: RouteMethod;
  path: string;
  /** One line for OpenAPI. */
  summary: string;
  description?: string;
  /** OpenAPI tag (resource group). */
  tag: string;
  /** Path parameters; default none. */
  params?: P;
  /** Query parameters; default none, so any query parameter is a 400. */
  query?: Q;
  /** JSON body; default none (the body is not read). An empty body parses as `{}`. */
  body?: B;
  /** Success status and body schema (absent for 204). */
  status: 200 | 201 | 204;
  response?: R;
  responseDescription: string;
  /** Other non-error answers a handler may give with `new Reply(status, body)`. */
  alternates?: Record<number, ResponseDoc>;
  /** Error statuses beyond the automatic ones (400, 401 and 403 when authenticated, 404 for `:id` paths, 413/415 with a body). */
  errors?: number[];
  /** Default application/json; a text type sends the handler's string as is. */
  contentType?: string;
}

/** An authenticated route: handlers also get the caller's account, and its key or dashboard session. */
export interface RouteSpec<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType, R extends z.ZodType> extends SpecBase<
  P,
  Q,
  B,
  R
> {
  handler(
    input: HandlerInput<z.output<P>, z.output<Q>, z.output<B>> & {
      account: Account;
      key?: KeyRecord | undefined;
      session?: DashboardSession | undefined;
    },
  ): Promise<z.input<R> | Reply>;
}

/** A route served without credentials. */
export interface PublicRouteSpec<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType, R extends z.ZodType> extends SpecBase<
  P,
  Q,
  B,
  R
> {
  handler(input: HandlerInput<z.output<P>, z.output<Q>, z.output<B>>): Promise<z.input<R> | Reply>;
}

/**
 * Builds an authenticated route from schemas: params, query and body are validated before the
 * handler runs (400 naming the field), and its answer is validated against the response
 * schema before it is sent, so a field the schema does not list can never leak. The same
 * schemas produce the route's OpenAPI entry.
 */
export function defineRoute<
  P extends z.ZodObject = None,
  Q extends z.ZodObject = None,
  B extends z.ZodType = z.ZodUndefined,
  R extends z.ZodType = z.ZodVoid,
>(spec: RouteSpec<P, Q, B, R>): Route {
  return {
    method: spec.method,
    path: spec.path,
    doc: routeDoc(spec, false),
    handler: (ctx) =>
      run(spec, ctx.req, ctx.res, ctx.params, ctx.query, (input) =>
        spec.handler({ ...input, account: ctx.account, key: ctx.key, session: ctx.session }),
      ),
  };
}

/** Like defineRoute, for a route that needs no token. */
export function definePublicRoute<
  P extends z.ZodObject = None,
  Q extends z.ZodObject = None,
  B extends z.ZodType = z.ZodUndefined,
  R extends z.ZodType = z.ZodVoid,
>(spec: PublicRouteSpec<P, Q, B, R>): PublicRoute {
  return {
    method: spec.method,
    path: spec.path,
    public: true,
    doc: routeDoc(spec, true),
    handler: (ctx) => run(spec, ctx.req, ctx.res, ctx.params, ctx.query, spec.handler),
  };
}

async function run<P extends z.ZodObject, Q extends z.ZodObject, B extends z.ZodType, R extends z.ZodType>(
  spec: SpecBase<P, Q, B, R>,
  req: ApiRequest,
  res: ApiResponse,
  rawParams: Record<string, string>,
  rawQuery: URLSearchParams,
  handler: (input: HandlerInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<unknown>,
): Promise<void> {
  const params = parsePart(spec.params ?? NONE, rawParams, 'path parameter') as z.output<P>;
  const query = parsePart(spec.query ?? NONE, queryObject(rawQuery), 'query parameter') as z.output<Q>;
  const body = (spec.body ? parsePart(spec.body, (await readJson(req)) ?? {}, 'body field') : undefined) as z.output<B>;
  const result = await handler({ params, query, body, req, res });
  const status = result instanceof Reply ? result.status : spec.status;
  const value = result instanceof Reply ? result.body : result;
  const doc =
    result instanceof Reply ? spec.alternates?.[status] : { description: '', schema: spec.response, contentType: spec.contentType };
  // A broken response is a server bug: a plain Error, logged and answered 500 by the front door.
  if (!doc) throw new Error(`${spec.method} ${spec.path} answered undocumented status ${status}`);
  if (!doc.schema) return sendEmpty(res, status);
  const checked = doc.schema.safeParse(value);
  if (!checked.success) {
    // Issues carry paths and expectations, never the values (which may be secrets).
    const where = checked.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.code}`).join('; ');
    throw new Error(`${spec.method} ${spec.path} response does not match its schema (${where})`);
  }
  if (doc.contentType && !doc.contentType.startsWith('application/json'))
    return sendText(res, status, doc.contentType, String(checked.data));
  sendJson(res, status, checked.data);
}

function routeDoc(spec: SpecBase<z.ZodObject, z.ZodObject, z.ZodType, z.ZodType>, isPublic: boolean): RouteDoc {
  // Authenticated routes also answer 403 csrf_failed to a session cookie without its CSRF token.
  const errors = new Set<number>([400, ...(isPublic ? [] : [401, 403]), ...(spec.errors ?? [])]);
  if (spec.path.includes('/:')) errors.add(404);
  if (spec.body) [413, 415].forEach((status) => errors.add(status));
  const success: ResponseDoc = { description: spec.responseDescription, contentType: spec.contentType };
  if (spec.response) success.schema = spec.response;
  const doc: RouteDoc = {
    summary: spec.summary,
    tags: [spec.tag],
    responses: { [spec.status]: success, ...spec.alternates },
    errors: [...errors].sort((a, b) => a - b),
  };
  if (spec.description) doc.description = spec.description;
  if (spec.params) doc.params = spec.params;
  if (spec.query) doc.query = spec.query;
  if (spec.body) doc.body = spec.body;
  return doc;
}
