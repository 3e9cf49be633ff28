import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { ApiClient, type CapturedRequest, type StreamFilters } from '@svcrouter/sdk';
import { schemas } from '@svcrouter/server/api';
import { api, type TestServer } from './index.js';

// Shared by the api-*.test.ts files: a REST client that checks every answer against the
// OpenAPI document the server publishes, using the zod schemas that document was made from.

/** One API answer. */
export interface ApiAnswer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

/** The published OpenAPI document, as far as these tests read it. */
export interface OpenApiDoc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }> }>>;
  components: { schemas: Record<string, unknown> };
}

/** One GET /v1/requests item (and one live stream event's data), and one page of them. */
export type { CapturedRequest as Captured, RequestPage as Page } from '@svcrouter/sdk';

/** Auth for a call: a token (Bearer), a raw Authorization value, or nothing. */
export type Auth = { token: string } | { authorization: string } | 'none';

/** Calls the API at the apex; the body, when given, is sent as JSON. */
export function call(server: Pick<TestServer, 'url'>, method: string, path: string, auth: Auth, body?: unknown): Promise<ApiAnswer> {
  return api(server, method, path, auth === 'none' ? {} : auth, body);
}

/** Fetches the OpenAPI document (no token). */
export async function openApi(server: Pick<TestServer, 'url'>): Promise<OpenApiDoc> {
  const answer = await call(server, 'GET', '/v1/openapi.json', 'none');
  assert.equal(answer.status, 200);
  return answer.body as OpenApiDoc;
}

/** The OpenAPI path template a concrete path matches (`/v1/keys/key_1` → `/v1/keys/{id}`). */
export function templateOf(doc: OpenApiDoc, path: string): string | undefined {
  const segments = path.split('?')[0]!.split('/').filter(Boolean);
  return Object.keys(doc.paths).find((template) => {
    const parts = template.split('/').filter(Boolean);
    return parts.length === segments.length && parts.every((part, i) => part.startsWith('{') || part === segments[i]);
  });
}

/**
 * Asserts that the answer is documented: the operation exists, the status is one of its
 * responses, and a JSON body parses with the (strict) schema the document names for it.
 */
export function assertDocumented(doc: OpenApiDoc, method: string, path: string, answer: ApiAnswer): void {
  const template = templateOf(doc, path);
  assert.ok(template, `${path} is not in the OpenAPI document`);
  const operation = doc.paths[template]![method.toLowerCase()];
  assert.ok(operation, `${method} ${template} is not in the OpenAPI document`);
  const response = operation.responses[String(answer.status)] ?? (answer.status >= 500 ? operation.responses.default : undefined);
  assert.ok(response, `${method} ${template} answered undocumented status ${answer.status}`);
  const json = response.content?.['application/json'];
  if (!json) return;
  const ref = json.schema.$ref;
  if (!ref) return;
  const name = ref.split('/').at(-1)!;
  const schema = schemas.schemasById[name];
  assert.ok(schema, `no schema named ${name}`);
  const result = schema.safeParse(answer.body);
  assert.ok(result.success, `${method} ${path} → ${answer.status} does not match ${name}: ${result.error?.message}\n${answer.text}`);
}

/** A client bound to one server that asserts every answer is documented. */
export function apiClient(server: Pick<TestServer, 'url'>, doc: OpenApiDoc) {
  return async (method: string, path: string, auth: Auth, body?: unknown): Promise<ApiAnswer> => {
    const answer = await call(server, method, path, auth, body);
    assertDocumented(doc, method, path, answer);
    return answer;
  };
}

/**
 * Re-reads until `check` passes, for state written in the background with no event to wait
 * on (inspector batches, usage flushes): a bounded number of attempts with short pauses.
 */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, attempts = 200): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < attempts; i++) {
    last = await read();
    if (check(last)) return last;
    await delay(25);
  }
  assert.fail(`${what}: not reached after ${attempts} reads; last: ${JSON.stringify(last)}`);
}

/**
 * The account's first inspector record that matches `filters`, as the edge writes it: follows
 * GET /v1/requests/stream from the start of time, so a record already stored is replayed and a
 * later one arrives live. An event to wait on, where `eventually` re-reads a list.
 */
export async function recordArrives(
  server: Pick<TestServer, 'url'>,
  token: string,
  filters: StreamFilters,
  timeoutMs = 30_000,
): Promise<CapturedRequest> {
  const client = new ApiClient({ baseUrl: server.url, token });
  const signal = AbortSignal.timeout(timeoutMs);
  for await (const event of client.requests.stream({ since: new Date(0).toISOString(), ...filters }, { signal })) {
    if (event.type === 'request') return event.request;
  }
  assert.fail(`no record matching ${JSON.stringify(filters)} within ${timeoutMs} ms`);
}

/** Asserts none of `secrets` occurs in `text` (a response of another account, a log). */
export function assertNoneOf(text: string, secrets: readonly string[], where: string): void {
  for (const secret of secrets) assert.ok(!text.includes(secret), `${where} contains ${JSON.stringify(secret)}`);
}
