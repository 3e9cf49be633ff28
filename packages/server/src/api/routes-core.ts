import type { z } from 'zod';
import {
  accessSummary,
  routesFromJson,
  trafficSummary,
  type AccessSummary,
  type TrafficSummary,
  type TunnelPolicy,
} from '@svcrouter/protocol';
import type { Tunnel, TunnelRepo } from '../store/index.js';
import { defineRoute } from './define-route.js';
import { tlsUrl } from '../hostname/index.js';
import { notFound } from './errors.js';
import type { Route } from './router.js';
import { Account, IdParams, TunnelList, type Tunnel as TunnelView } from './schemas.js';

/** What the account and tunnel routes need. */
export interface CoreRouteDeps {
  store: { tunnels: Pick<TunnelRepo, 'listForAccount' | 'delete'> };
  /** Public URL of a hostname. */
  publicUrl(hostname: string): string;
  /** Tells the edge to release a live tunnel (the agent exits). */
  releaseTunnel(tunnelId: string, reason: string): void;
  /** Whether a tunnel is live right now (the router is the truth, the store may lag). */
  isLive(tunnelId: string): boolean;
}

/** The tunnel as the API shows it. */
export function tunnelView(tunnel: Tunnel, deps: Pick<CoreRouteDeps, 'publicUrl' | 'isLive'>): z.input<typeof TunnelView> {
  // A TCP tunnel is named `<shared domain>:<port>` (edge/tcp/tcp-address.ts); no hostname has a colon.
  const tcp = tunnel.hostname.includes(':');
  const proto = tcp ? 'tcp' : tunnel.proto === 'tls' ? 'tls' : 'http';
  return {
    id: tunnel.id,
    status: deps.isLive(tunnel.id) ? 'online' : 'offline',
    proto,
    url: tcp ? `tcp://${tunnel.hostname}` : proto === 'tls' ? tlsUrl(deps.publicUrl(tunnel.hostname)) : deps.publicUrl(tunnel.hostname),
    host: tunnel.hostname,
    pinned: tunnel.pinned,
    pool: tunnel.pool,
    local: tunnel.localAddr,
    // From the row, so every node of a cluster shows the same routes, whichever holds the agent.
    routes: routesFromJson(tunnel.routes) ?? [],
    agentVersion: tunnel.agentVersion,
    agentIp: tunnel.agentIp,
    access: accessOf(tunnel),
    traffic: trafficOf(tunnel),
    createdAt: new Date(tunnel.createdAt).toISOString(),
    updatedAt: new Date(tunnel.updatedAt).toISOString(),
  };
}

/** A tunnel's access rules as the API shows them: user names and CIDRs, never a password hash. */
function accessOf(tunnel: Tunnel): AccessSummary {
  if (tunnel.policy === undefined) return accessSummary(undefined);
  try {
    return accessSummary(JSON.parse(tunnel.policy) as TunnelPolicy);
  } catch {
    return accessSummary(undefined);
  }
}

/** A tunnel's traffic rules as the API shows them: header names, the limit, the webhook provider, never a secret. */
function trafficOf(tunnel: Tunnel): TrafficSummary {
  try {
    return trafficSummary(tunnel.policy === undefined ? undefined : (JSON.parse(tunnel.policy) as TunnelPolicy));
  } catch {
    return trafficSummary(undefined);
  }
}

/** GET /v1/me, GET /v1/tunnels, DELETE /v1/tunnels/:id. */
export function coreRoutes(deps: CoreRouteDeps): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/me',
      tag: 'account',
      summary: 'The account the token belongs to',
      status: 200,
      response: Account,
      responseDescription: 'the account',
      async handler({ account }) {
        return { id: account.id, email: account.email, name: account.name, plan: account.plan };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/tunnels',
      tag: 'tunnels',
      summary: 'Tunnels of the account with their live status',
      description: 'Online tunnels, and offline ones kept because their name was pinned or the agent lost its connection.',
      status: 200,
      response: TunnelList,
      responseDescription: 'the tunnels, newest first',
      async handler({ account }) {
        const tunnels = await deps.store.tunnels.listForAccount(account.id);
        return { tunnels: tunnels.map((tunnel) => tunnelView(tunnel, deps)) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/tunnels/:id',
      tag: 'tunnels',
      summary: 'Release a tunnel and free its name',
      description: 'A connected agent is told the tunnel was released and exits.',
      params: IdParams,
      status: 204,
      responseDescription: 'released',
      async handler({ account, params }) {
        const removed = await deps.store.tunnels.delete(account.id, params.id);
        // Another account's id answers exactly like a missing one: existence is not confirmed.
        if (!removed) throw notFound('tunnel');
        deps.releaseTunnel(removed.id, `tunnel ${removed.hostname} was deleted through the API`);
      },
    }),
  ];
}
