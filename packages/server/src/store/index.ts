export type {
  Account,
  AccountRepo,
  KeyRecord,
  KeyRepo,
  NewAccount,
  NewKey,
  Plan,
  Store,
  Tunnel,
  TunnelBinding,
  TunnelRepo,
  TunnelStatus,
} from './store.js';
export { PLANS } from './store.js';
export { StoreConflictError } from './store-conflict-error.js';
export { openStore, isPostgresUrl, SQLITE_FILE, type OpenStoreOptions } from './open-store.js';
