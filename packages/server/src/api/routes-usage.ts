import type { z } from 'zod';
import type { Account, DomainRepo, Plan, PlanLimits, UsageRepo } from '../store/index.js';
import { defineRoute } from './define-route.js';
import type { Route } from './router.js';
import { Usage, UsageHistory, UsageHistoryQuery } from './schemas.js';

/** What the usage routes need. */
export interface UsageRouteDeps {
  limitsFor(plan: Plan): PlanLimits;
  /** Live tunnels of the account (the edge's routing table). */
  liveTunnels(accountId: string): number;
  /** The usage meter: bytes transferred this calendar month (UTC), flushed or not. */
  meter: { usedBytes(accountId: string): number | Promise<number> };
  /** Daily rollups (newest first) and custom domains; a store without domains counts 0. */
  store: { usage: Pick<UsageRepo, 'history'>; domains?: Pick<DomainRepo, 'countForAccount'> | undefined };
}

/** The usage object of GET /v1/usage (also the data of the usage.threshold webhook event). */
export async function usageView(
  deps: Omit<UsageRouteDeps, 'store'> & { store: Pick<UsageRouteDeps['store'], 'domains'> },
  account: Account,
): Promise<z.input<typeof Usage>> {
  const [bandwidthBytes, domains] = await Promise.all([
    deps.meter.usedBytes(account.id),
    deps.store.domains ? deps.store.domains.countForAccount(account.id) : 0,
  ]);
  const limits = deps.limitsFor(account.plan);
  return {
    plan: account.plan,
    limits: { domains: limits.domains, tunnels: limits.tunnels, bandwidthBytes: limits.bandwidthBytes },
    used: { domains, tunnels: deps.liveTunnels(account.id), bandwidthBytes: Math.round(bandwidthBytes) },
  };
}

/** GET /v1/usage and GET /v1/usage/history. */
export function usageRoutes(deps: UsageRouteDeps): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/usage',
      tag: 'usage',
      summary: 'Plan limits and current consumption',
      description:
        'used.tunnels counts live tunnels; used.bandwidthBytes counts bytes in both directions this calendar month (UTC); used.domains counts custom domains.',
      status: 200,
      response: Usage,
      responseDescription: 'limits and usage',
      async handler({ account }) {
        return usageView(deps, account);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/usage/history',
      tag: 'usage',
      summary: 'Daily usage rollups',
      description: 'One entry per UTC day with traffic, newest first. Without from/to, every retained day.',
      query: UsageHistoryQuery,
      status: 200,
      response: UsageHistory,
      responseDescription: 'the days, newest first',
      async handler({ account, query }) {
        const range: { from?: string; to?: string } = {};
        if (query.from !== undefined) range.from = query.from;
        if (query.to !== undefined) range.to = query.to;
        const rows = await deps.store.usage.history(account.id, range);
        // Newest first is the contract; sorting here keeps it whatever order the store returns.
        const days = [...rows].sort((a, b) => (a.day < b.day ? 1 : a.day > b.day ? -1 : 0));
        return {
          days: days.map((row) => ({
            date: row.day,
            bandwidthBytes: row.bytes,
            requests: row.requests,
            peakTunnels: row.peakTunnels,
          })),
        };
      },
    }),
  ];
}
