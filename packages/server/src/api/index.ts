export { createApi, type ApiDeps } from './api.js';
export { coreRoutes, tunnelView, type CoreRouteDeps } from './routes-core.js';
export { ApiError, sendJson, sendEmpty, readJson, type ApiRequest, type ApiResponse } from './http-io.js';
export { matchRoute, type Route, type RouteContext } from './router.js';
