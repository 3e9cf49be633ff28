import { ApiError, ClientErrorCode } from './api-error.js';
import type { paths } from './generated/api-types.js';

/** HTTP methods the API uses, as the generated `paths` spell them. */
export type Method = 'get' | 'post' | 'delete';
/** The generated operation for `method` on `path`. */
export type Operation<P extends keyof paths, M extends Method> = paths[P] extends Record<M, infer O> ? O : never;
/** Methods defined on `path`. */
export type MethodsOf<P extends keyof paths> = Extract<keyof paths[P], Method>;

type JsonOf<R> = R extends { content: { 'application/json': infer Body } } ? Body : never;
/** The success body of an operation: its 200 or 201 JSON, or void for 204 No Content. */
export type Success<O> = O extends { responses: infer R }
  ? 204 extends keyof R
    ? void
    : 200 extends keyof R
      ? JsonOf<R[200]>
      : 201 extends keyof R
        ? JsonOf<R[201]>
        : never
  : never;
/** Query parameters of an operation. */
export type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type PathOf<O> = O extends { parameters: { path: infer Params } } ? Params : never;
type BodyOf<O> = O extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never;

/** The part of a call input for what an operation lacks: no field. */
type NoField = Record<never, never>;

/** What a call sends besides method and path; each part exists only where the operation has it. */
export type CallInput<O> = ([PathOf<O>] extends [never] ? NoField : { path: PathOf<O> }) &
  ([QueryOf<O>] extends [never] ? NoField : { query?: QueryOf<O> }) &
  ([BodyOf<O>] extends [never] ? NoField : { body: BodyOf<O> });

/** Where a client sends its calls and with which token. */
export interface Endpoint {
  /** Apex URL without the trailing slash, e.g. http://localhost:8080. */
  baseUrl: string;
  token: string;
}

/**
 * One REST call typed by the generated `paths`: the path, its parameters, query and body, and
 * the answer are those of the OpenAPI document, so a route that changes shape breaks the build.
 * Rejects with ApiError.
 */
export async function call<P extends keyof paths, M extends MethodsOf<P>>(
  endpoint: Endpoint,
  method: M,
  path: P,
  input: CallInput<Operation<P, M>>,
): Promise<Success<Operation<P, M>>> {
  const url = buildUrl(endpoint, path, input);
  const body = 'body' in input ? JSON.stringify(input.body) : undefined;
  const response = await send(endpoint, url, {
    method: method.toUpperCase(),
    headers: { authorization: `Bearer ${endpoint.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body,
  });
  const text = await readText(response, url);
  if (!response.ok) throw ApiError.fromResponse(response.status, text);
  if (response.status === 204) return undefined as Success<Operation<P, M>>;
  try {
    // The server validates every answer against the same schemas the types come from.
    return JSON.parse(text) as Success<Operation<P, M>>;
  } catch {
    throw new ApiError(
      response.status,
      ClientErrorCode.UNEXPECTED_RESPONSE,
      `${url.pathname} answered ${response.status} with a body that is not JSON`,
    );
  }
}

/** The URL of `path` with `{name}` parameters filled in and the query appended. */
export function buildUrl(endpoint: Endpoint, path: string, input: object): URL {
  const params: Record<string, string> = 'path' in input && isRecord(input.path) ? stringValues(input.path) : {};
  const filled = path.replace(/\{([A-Za-z0-9_]+)\}/g, (_match, name: string) => encodeURIComponent(params[name] ?? ''));
  const url = new URL(endpoint.baseUrl + filled);
  const query = 'query' in input && isRecord(input.query) ? stringValues(input.query) : {};
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}

/** fetch(), with a network failure turned into ApiError `unreachable`. */
export async function send(endpoint: Endpoint, url: URL, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (init.signal?.aborted) throw error;
    throw new ApiError(0, ClientErrorCode.UNREACHABLE, `cannot reach the svcRouter API at ${endpoint.baseUrl}: ${describeCause(error)}`);
  }
}

async function readText(response: Response, url: URL): Promise<string> {
  try {
    return await response.text();
  } catch (error) {
    throw new ApiError(
      response.status,
      ClientErrorCode.UNEXPECTED_RESPONSE,
      `${url.pathname}: the answer was cut off (${describeCause(error)})`,
    );
  }
}

/** fetch() hides the socket error (ECONNREFUSED…) in `cause`; that is the useful part. */
function describeCause(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error) return 'code' in cause && typeof cause.code === 'string' ? cause.code : cause.message;
  return String(cause);
}

/** Filters with `status` as the API reads it, text (`404`, `4xx`); a number is sent as its digits. */
export function withTextStatus<F extends { status?: string | number }>(filters: F): Omit<F, 'status'> & { status?: string } {
  const { status, ...rest } = filters;
  return status === undefined ? rest : { ...rest, status: String(status) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Defined values as strings (numbers and dates as the API reads them); undefined ones dropped. */
function stringValues(record: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(record)) {
    if (value === undefined || value === null) continue;
    out[name] = value instanceof Date ? value.toISOString() : String(value);
  }
  return out;
}
