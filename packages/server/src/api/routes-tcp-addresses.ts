import { randomInt } from 'node:crypto';
import { z } from 'zod';
import type { Plan, PlanLimits, TcpAddress, TcpAddressRepo, TunnelRepo } from '../store/index.js';
import { defineRoute } from './define-route.js';
import { ApiError, notFound } from './errors.js';
import type { Route } from './router.js';
import { IdParams, named } from './schemas.js';

/** Reservations tried when another node or request wins the port picked: each picks again from what is free. */
const RESERVE_ATTEMPTS = 8;

/** Stable `error` codes of the TCP address routes. */
export const TcpAddressErrorCode = {
  /** 403: the plan's limit of reserved TCP addresses is reached; the message states it. */
  TCP_ADDRESS_LIMIT: 'tcp_address_limit',
  /** 409: every port of SVC_TCP_PORTS is held or reserved, or TCP tunnels are off. */
  TCP_PORT_UNAVAILABLE: 'tcp_port_unavailable',
} as const;

export const TcpAddressView = named(
  'TcpAddress',
  'A TCP address reserved by the account: `svc tcp <port> --remote-addr <addr>` binds it.',
  z.strictObject({
    id: z.string(),
    port: z.int().min(1).max(65535),
    addr: z.string().describe('host:port, for --remote-addr'),
    url: z.string().describe('tcp://host:port, what visitors connect to'),
    createdAt: z.iso.datetime().describe('ISO 8601 UTC timestamp'),
  }),
);
export const TcpAddressList = named(
  'TcpAddressList',
  'The TCP addresses reserved by the account, lowest port first.',
  z.strictObject({ tcpAddresses: z.array(TcpAddressView) }),
);
export const NewTcpAddressBody = named(
  'NewTcpAddress',
  'Body of POST /v1/tcp-addresses: empty (a free port is picked).',
  z.strictObject({}),
);

/** What the TCP address routes need. */
export interface TcpAddressRouteDeps {
  store: { tcpAddresses: TcpAddressRepo; tunnels: Pick<TunnelRepo, 'byHostname'> };
  limitsFor(plan: Plan): PlanLimits;
  /** SVC_SHARED_DOMAIN: the host of every TCP address. */
  sharedDomain: string;
  /** SVC_TCP_PORTS; undefined: TCP tunnels are off, and nothing can be reserved. */
  tcpPorts?: { from: number; to: number } | undefined;
  /** Closes a live tunnel (its agent is told); after a reservation's delete, the tunnel bound on it. */
  releaseTunnel(tunnelId: string, reason: string): void;
}

/** GET/POST /v1/tcp-addresses, DELETE /v1/tcp-addresses/:id. */
export function tcpAddressRoutes(deps: TcpAddressRouteDeps): Route[] {
  const repo = deps.store.tcpAddresses;
  const view = (address: TcpAddress): z.input<typeof TcpAddressView> => {
    const addr = `${deps.sharedDomain}:${address.port}`;
    return { id: address.id, port: address.port, addr, url: `tcp://${addr}`, createdAt: new Date(address.createdAt).toISOString() };
  };
  // Reservations of one account run one at a time (per node), so parallel ones cannot pass the limit together.
  const queues = new Map<string, Promise<unknown>>();
  function serialized<T>(accountId: string, task: () => Promise<T>): Promise<T> {
    const next = (queues.get(accountId) ?? Promise.resolve()).then(task, task);
    const tail = next.catch(() => undefined);
    queues.set(accountId, tail);
    void tail.then(() => queues.get(accountId) === tail && queues.delete(accountId));
    return next;
  }
  const unavailable = (why: string): ApiError =>
    new ApiError(409, TcpAddressErrorCode.TCP_PORT_UNAVAILABLE, `No TCP port available: ${why}`);

  async function reserveFree(accountId: string): Promise<TcpAddress> {
    const range = deps.tcpPorts;
    if (range === undefined) throw unavailable('TCP tunnels are off on this server (SVC_TCP_PORTS=off).');
    for (let attempt = 0; attempt < RESERVE_ATTEMPTS; attempt++) {
      const taken = await repo.takenPorts(range.from, range.to, Date.now());
      const free: number[] = [];
      for (let port = range.from; port <= range.to; port++) if (!taken.has(port)) free.push(port);
      if (free.length === 0) break;
      const reserved = await repo.reserve(accountId, free[randomInt(free.length)]!, Date.now());
      if (reserved) return reserved;
    }
    throw unavailable(`every port of ${range.from}-${range.to} is in use or reserved.`);
  }

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/tcp-addresses',
      tag: 'tcp-addresses',
      summary: 'TCP addresses reserved by the account',
      status: 200,
      response: TcpAddressList,
      responseDescription: 'the reservations, lowest port first',
      async handler({ account }) {
        return { tcpAddresses: (await repo.listReserved(account.id)).map(view) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/tcp-addresses',
      tag: 'tcp-addresses',
      summary: 'Reserve a TCP address',
      description:
        'Reserves a free port of the server’s TCP range for the account for good; `svc tcp <port> --remote-addr <addr>` binds it, and no other account can. ' +
        '403 tcp_address_limit: the plan limit (`tcpAddresses`) is reached (the message states it). 409 tcp_port_unavailable: every port is in use or reserved, or TCP tunnels are off.',
      body: NewTcpAddressBody,
      status: 201,
      response: TcpAddressView,
      responseDescription: 'the new reservation',
      errors: [403, 409],
      async handler({ account }) {
        return serialized(account.id, async () => {
          const limit = deps.limitsFor(account.plan).tcpAddresses ?? 0;
          const count = await repo.countReserved(account.id);
          if (count >= limit) {
            throw new ApiError(
              403,
              TcpAddressErrorCode.TCP_ADDRESS_LIMIT,
              `TCP address limit reached: the ${account.plan} plan allows ${limit} reserved TCP address${limit === 1 ? '' : 'es'} and this account has ${count}. ` +
                'Delete one with DELETE /v1/tcp-addresses/:id, or move to a plan with more.',
            );
          }
          return view(await reserveFree(account.id));
        });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/tcp-addresses/:id',
      tag: 'tcp-addresses',
      summary: 'Release a reserved TCP address',
      description: 'A tunnel bound on it is closed (its agent prints a line and exits), and the port is free for anyone.',
      params: IdParams,
      status: 204,
      responseDescription: 'released',
      async handler({ account, params }) {
        const removed = await repo.deleteReserved(account.id, params.id);
        if (removed === undefined) throw notFound('TCP address');
        const addr = `${deps.sharedDomain}:${removed.port}`;
        const tunnel = await deps.store.tunnels.byHostname(addr);
        if (tunnel?.status === 'online' && tunnel.accountId === account.id) {
          deps.releaseTunnel(tunnel.id, `the reserved TCP address ${addr} was deleted through the API`);
        }
      },
    }),
  ];
}
