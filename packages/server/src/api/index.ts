// The REST API at the apex: the /v1 routes, dashboard sign-in, health and /metrics, each request's
// authentication, validation and errors, and the OpenAPI document built from the route table.
// May use: hostname, store, auth, certs, domains, usage, inspector, metrics. It never sees the edge
// or the cluster: server.ts hands it what it needs of them as functions.
export { createApi, OPENAPI_PATH, type ApiDeps, type Authenticate, type ResolveSession } from './api.js';
export { authRoutes, type AuthRouteDeps, type SignupMode } from './routes-auth.js';
export { passwordRoutes, type PasswordRouteDeps } from './routes-password.js';
export { arrivedOverTls, CSRF_HEADER, CSRF_MESSAGE, type RequestIdentity } from './request-auth.js';
export { controlPlaneRoutes, type ControlPlaneDeps } from './api-routes.js';
export { coreRoutes, tunnelView, type CoreRouteDeps } from './routes-core.js';
export { usageRoutes, usageView, type UsageRouteDeps } from './routes-usage.js';
export { requestRoutes, type RequestRouteDeps } from './routes-requests.js';
export {
  requestStreamRoutes,
  STREAM_KEEP_ALIVE_MS,
  STREAM_MAX_QUEUED,
  type LiveRequests,
  type RequestStreamDeps,
} from './routes-request-stream.js';
export { keyRoutes, keyView, LAST_KEY_MESSAGE, type KeyRouteDeps } from './routes-keys.js';
export {
  domainRoutes,
  domainLimitMessage,
  DomainErrorCode,
  targetView,
  VERIFY_TIMEOUT_MS,
  type DomainRouteDeps,
} from './routes-domains.js';
export { webhookRoutes, deliveryView, webhookLimitMessage, WebhookErrorCode, type WebhookRouteDeps } from './routes-webhooks.js';
export { opsRoutes, PROMETHEUS_CONTENT_TYPE, READY_STORE_TIMEOUT_MS, type OpsRouteDeps } from './routes-ops.js';
export { defineRoute, definePublicRoute, Reply, type RouteSpec, type PublicRouteSpec, type HandlerInput } from './define-route.js';
export { buildOpenApi, type OpenApiInfo, type JsonObject } from './openapi.js';
export { encodeCursor, decodeCursor, type RequestCursor } from './cursor.js';
export { ApiErrorCode, notFound, invalidRequest, type ApiErrorCodeValue } from './errors.js';
export * as schemas from './schemas.js';
export { ApiError, sendJson, sendEmpty, sendText, readJson, type ApiRequest, type ApiResponse } from './http-io.js';
export {
  matchRoute,
  type AnyRoute,
  type PublicRoute,
  type PublicRouteContext,
  type ResponseDoc,
  type Route,
  type RouteContext,
  type RouteDoc,
  type RouteMethod,
} from './router.js';
