// Row shapes as the database stores them: snake_case columns, timestamps as
// integer milliseconds (bigint in PostgreSQL), booleans as integer 0/1, ids as
// text. The repos map these rows to the camelCase records in store.ts.

/** accounts: one row per customer. */
export interface AccountsTable {
  id: string;
  email: string;
  name: string;
  plan: string;
  created_at: number;
}

/** api_keys: agent tokens, stored only as a sha256 hash. */
export interface ApiKeysTable {
  id: string;
  account_id: string;
  description: string;
  prefix: string;
  token_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** tunnels: one row per hostname, kept across agent runs so a pinned name keeps its id. */
export interface TunnelsTable {
  id: string;
  account_id: string;
  hostname: string;
  status: string;
  pinned: number;
  local_addr: string;
  agent_version: string;
  agent_ip: string;
  node_id: string;
  created_at: number;
  updated_at: number;
}

/** The Kysely database type: table name to row shape. */
export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  tunnels: TunnelsTable;
}
