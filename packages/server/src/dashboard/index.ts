// Serves the built web UI's static files at the apex, with their security and cache headers. It
// knows a folder, not the store, the API or the edge.
// May use: nothing of the server.
export {
  createDashboardHandler,
  DASHBOARD_CSP,
  SECURITY_HEADERS,
  ASSET_CACHE_CONTROL,
  PAGE_CACHE_CONTROL,
  type DashboardHandler,
} from './static-files.js';
