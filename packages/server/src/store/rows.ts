import type { Selectable } from 'kysely';
import type { AccountsTable, ApiKeysTable, TunnelsTable } from './schema.js';
import { PLANS, type Account, type KeyRecord, type Plan, type Tunnel, type TunnelStatus } from './store.js';

/** A stored plan name as a Plan; throws on a name the store never writes. */
export function toPlan(value: string): Plan {
  const plan = PLANS.find((p) => p === value);
  // Only the store writes this column, so an unknown value means a broken database.
  if (plan === undefined) throw new Error(`unknown plan in store: ${value}`);
  return plan;
}

function toStatus(value: string): TunnelStatus {
  if (value !== 'online' && value !== 'offline') throw new Error(`unknown tunnel status in store: ${value}`);
  return value;
}

/** Maps an accounts row to an Account; the password hash never leaves the repo this way. */
export function accountFromRow(row: Omit<Selectable<AccountsTable>, 'password_hash'>): Account {
  return { id: row.id, email: row.email, name: row.name, plan: toPlan(row.plan), createdAt: row.created_at };
}

/** Maps an api_keys row to a KeyRecord (SQL null becomes undefined). */
export function keyFromRow(row: Selectable<ApiKeysTable>): KeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    description: row.description,
    prefix: row.prefix,
    tokenHash: row.token_hash,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at ?? undefined,
    revokedAt: row.revoked_at ?? undefined,
  };
}

/** Maps a tunnels row to a Tunnel (integer 0/1 becomes a boolean). */
export function tunnelFromRow(row: Selectable<TunnelsTable>): Tunnel {
  return {
    id: row.id,
    accountId: row.account_id,
    hostname: row.hostname,
    status: toStatus(row.status),
    pinned: row.pinned === 1,
    localAddr: row.local_addr,
    agentVersion: row.agent_version,
    agentIp: row.agent_ip,
    nodeId: row.node_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    policy: row.policy ?? undefined,
    pool: row.pool_member !== '',
    proto: row.proto === 'tls' || row.proto === 'tcp' ? row.proto : 'http',
    ...(row.routes ? { routes: row.routes } : {}),
  };
}
