export {
  createDashboardHandler,
  DASHBOARD_CSP,
  SECURITY_HEADERS,
  ASSET_CACHE_CONTROL,
  PAGE_CACHE_CONTROL,
  type DashboardHandler,
} from './static-files.js';
