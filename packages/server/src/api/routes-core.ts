import type { Store, Tunnel } from '../store/index.js';
import { ApiError, sendEmpty, sendJson } from './http-io.js';
import type { Route } from './router.js';

export interface CoreRouteDeps {
  store: Store;
  /** Public URL of a hostname. */
  publicUrl(hostname: string): string;
  /** Tells the edge to release a live tunnel (the agent exits). */
  releaseTunnel(tunnelId: string, reason: string): void;
  /** Whether a tunnel is live right now (the router is the truth, the store may lag). */
  isLive(tunnelId: string): boolean;
}

/** The tunnel as the API shows it. */
export function tunnelView(tunnel: Tunnel, deps: Pick<CoreRouteDeps, 'publicUrl' | 'isLive'>): Record<string, unknown> {
  return {
    id: tunnel.id,
    status: deps.isLive(tunnel.id) ? 'online' : 'offline',
    url: deps.publicUrl(tunnel.hostname),
    host: tunnel.hostname,
    pinned: tunnel.pinned,
    local: tunnel.localAddr,
    agentVersion: tunnel.agentVersion,
    agentIp: tunnel.agentIp,
    createdAt: new Date(tunnel.createdAt).toISOString(),
    updatedAt: new Date(tunnel.updatedAt).toISOString(),
  };
}

/** GET /v1/me, GET /v1/tunnels, DELETE /v1/tunnels/:id. */
export function coreRoutes(deps: CoreRouteDeps): Route[] {
  return [
    {
      method: 'GET',
      path: '/v1/me',
      async handler({ res, account }) {
        sendJson(res, 200, { id: account.id, email: account.email, name: account.name, plan: account.plan });
      },
    },
    {
      method: 'GET',
      path: '/v1/tunnels',
      async handler({ res, account }) {
        const tunnels = await deps.store.tunnels.listForAccount(account.id);
        sendJson(res, 200, { tunnels: tunnels.map((tunnel) => tunnelView(tunnel, deps)) });
      },
    },
    {
      method: 'DELETE',
      path: '/v1/tunnels/:id',
      async handler({ res, account, params }) {
        const removed = await deps.store.tunnels.delete(account.id, params.id!);
        // Another account's id answers exactly like a missing one: existence is not confirmed.
        if (!removed) throw new ApiError(404, 'not_found', `no tunnel with id ${params.id}`);
        deps.releaseTunnel(removed.id, `tunnel ${removed.hostname} was deleted through the API`);
        sendEmpty(res, 204);
      },
    },
  ];
}
