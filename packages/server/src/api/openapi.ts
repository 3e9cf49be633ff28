import { z } from 'zod';
import type { AnyRoute, ResponseDoc } from './router.js';
import { apiSchemas, ErrorBody, UnauthorizedBody } from './schemas.js';

/** A JSON object (the OpenAPI document and its parts). */
export type JsonObject = Record<string, unknown>;

/** Title and version of the document. */
export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

const SCHEMA_URI = (id: string): string => `#/components/schemas/${id}`;

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid or unknown path parameter, query parameter or body field; the message names it',
  401: 'missing, malformed or revoked token (or session cookie); on /auth/signin a wrong email or password',
  403: 'refused: see the error code (csrf_failed, signup_closed, invalid_credentials)',
  404: "no such resource on this account (another account's ids answer the same)",
  405: 'method not allowed on this path (see the Allow header)',
  409: 'conflict with the current state; the message says how to resolve it',
  413: 'request body too large',
  415: 'request body is not application/json',
  429: 'too many failed sign-ins; wait for the Retry-After header',
};

/**
 * Builds the OpenAPI 3.1 document from the route table: paths, parameters, bodies and
 * responses come from the same zod schemas that validate requests and responses, so the
 * document cannot drift from behaviour. Routes without schemas still appear, with their
 * path parameters and error responses.
 */
export function buildOpenApi(routes: readonly AnyRoute[], info: OpenApiInfo): JsonObject {
  const { schemas } = z.toJSONSchema(apiSchemas, { uri: SCHEMA_URI });
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info,
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ bearer: [] }, { session: [] }],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, clean(schema as JsonObject)])),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An agent token (svc_…), as in SVC_TOKEN: `Authorization: Bearer svc_…`.',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: '__Host-svc_session',
          description:
            'The dashboard session cookie set by /auth/signin, /auth/signup and /auth/link: __Host-svc_session over HTTPS, svc_session over plain HTTP. ' +
            'Used only without an Authorization header, and not when the request carries two of the name; ' +
            'a request other than GET/HEAD must also send X-CSRF-Token (the csrfToken of the sign-in answer or GET /auth/session), else 403 csrf_failed.',
        },
      },
    },
  };
}

function operation(route: AnyRoute): JsonObject {
  const doc = route.doc;
  const isPublic = route.public === true;
  const op: JsonObject = {
    operationId: `${route.method.toLowerCase()}${route.path.replace(/\/:?([A-Za-z0-9_]+)/g, (_m, w: string) => w[0]!.toUpperCase() + w.slice(1)).replace(/[^A-Za-z0-9]/g, '')}`,
    summary: doc?.summary ?? `${route.method} ${route.path}`,
  };
  if (doc?.description) op.description = doc.description;
  if (doc?.tags) op.tags = doc.tags;
  if (isPublic) op.security = [];
  const parameters = [...pathParameters(route), ...queryParameters(doc?.query)];
  if (parameters.length > 0) op.parameters = parameters;
  if (doc?.body) {
    op.requestBody = { required: false, content: { 'application/json': { schema: render(doc.body, 'input') } } };
  }
  const responses: JsonObject = {};
  for (const [status, response] of Object.entries(doc?.responses ?? {})) responses[status] = successResponse(response);
  const errors = doc?.errors ?? [...(isPublic ? [] : [401, 403]), ...(route.path.includes('/:') ? [404] : [])];
  for (const status of errors) responses[String(status)] = errorResponse(status, isPublic);
  responses.default = { description: 'unexpected server error (no details)', content: jsonContent(ErrorBody) };
  op.responses = responses;
  return op;
}

function pathParameters(route: AnyRoute): JsonObject[] {
  const names = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
  const schema = route.doc?.params ? (render(route.doc.params, 'input') as { properties?: Record<string, JsonObject> }) : {};
  return names.map((name) => ({ name, in: 'path', required: true, schema: schema.properties?.[name] ?? { type: 'string' } }));
}

function queryParameters(query: z.ZodObject | undefined): JsonObject[] {
  if (!query) return [];
  const schema = render(query, 'input') as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    const parameter: JsonObject = { name, in: 'query', required: schema.required?.includes(name) ?? false, schema: rest };
    if (typeof description === 'string') parameter.description = description;
    return parameter;
  });
}

function successResponse(response: ResponseDoc): JsonObject {
  const out: JsonObject = { description: response.description || 'success' };
  if (response.schema) {
    const type = response.contentType ?? 'application/json';
    out.content = { [type]: { schema: render(response.schema, 'output') } };
  }
  return out;
}

function errorResponse(status: number, isPublic: boolean): JsonObject {
  return {
    description: ERROR_DESCRIPTIONS[status] ?? 'error',
    // Only the token check answers the bare 401; a failed sign-in says why.
    content: jsonContent(status === 401 && !isPublic ? UnauthorizedBody : ErrorBody),
  };
}

function jsonContent(schema: z.ZodType): JsonObject {
  return { 'application/json': { schema: render(schema, 'output') } };
}

/** A schema as JSON Schema: a $ref for the named ones, inline otherwise. */
function render(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const id = apiSchemas.get(schema)?.id;
  if (id) return { $ref: SCHEMA_URI(id) };
  return clean(z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject);
}

function clean(schema: JsonObject): JsonObject {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}
