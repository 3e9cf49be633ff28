import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { ErrorCode, Messages } from '@svcrouter/protocol';
import type { Plan, PlanLimits, Store, Tunnel } from '../store/index.js';
import { PlanWatch, SWEEP_MS, planLoweredMessage, tunnelsBeyondLimit } from './plan-watch.js';

describe('tunnelsBeyondLimit', () => {
  const online = (...times: Array<[id: string, updatedAt: number]>) => times.map(([id, updatedAt]) => ({ id, updatedAt }));

  it('picks the newest beyond the limit and keeps the oldest', () => {
    assert.deepEqual(tunnelsBeyondLimit(online(['tun_c', 300], ['tun_a', 100], ['tun_b', 200]), 1), ['tun_b', 'tun_c']);
    assert.deepEqual(tunnelsBeyondLimit(online(['tun_c', 300], ['tun_a', 100], ['tun_b', 200]), 2), ['tun_c']);
  });

  it('ends nothing within the limit', () => {
    assert.deepEqual(tunnelsBeyondLimit(online(['tun_a', 100], ['tun_b', 200]), 2), []);
    assert.deepEqual(tunnelsBeyondLimit([], 0), []);
  });

  it('ends every tunnel at a limit of none', () => {
    assert.deepEqual(tunnelsBeyondLimit(online(['tun_b', 200], ['tun_a', 100]), 0), ['tun_a', 'tun_b']);
  });

  it('breaks ties by id, so every node picks the same tunnels', () => {
    const tied = online(['tun_z', 100], ['tun_m', 100], ['tun_a', 100]);
    assert.deepEqual(tunnelsBeyondLimit(tied, 1), ['tun_m', 'tun_z']);
    assert.deepEqual(tunnelsBeyondLimit([...tied].reverse(), 1), ['tun_m', 'tun_z']);
  });
});

const LIMITS: Record<Plan, PlanLimits> = {
  free: { tunnels: 1, domains: 0, bandwidthBytes: 1, webhooks: 0 },
  pro: { tunnels: 5, domains: 0, bandwidthBytes: 1, webhooks: 0 },
};

/**
 * A watch over a fake store and a fake node holding `held` (tunnel id → account) live, and `away`
 * (tunnel id → account and bind time) in their names' grace periods.
 */
function watchOver(
  held: Map<string, string>,
  rows: Tunnel[],
  plans: Map<string, Plan>,
  away = new Map<string, { accountId: string; boundAt: number }>(),
) {
  const queries: string[] = [];
  const ended: Array<{ tunnelId: string; code: string; message: string }> = [];
  let clock = 0;
  const store = {
    accounts: {
      plansOf: async (ids: readonly string[]) => {
        queries.push(`plansOf ${ids.join(',')}`);
        return new Map(ids.filter((id) => plans.has(id)).map((id) => [id, plans.get(id)!]));
      },
    },
    tunnels: {
      listForAccount: async (accountId: string) => {
        queries.push(`listForAccount ${accountId}`);
        return rows.filter((row) => row.accountId === accountId);
      },
      countOnlineOf: async (ids: readonly string[]) => {
        queries.push(`countOnlineOf ${ids.join(',')}`);
        const counts = new Map<string, number>();
        for (const r of rows)
          if (r.status === 'online' && ids.includes(r.accountId)) counts.set(r.accountId, (counts.get(r.accountId) ?? 0) + 1);
        return counts;
      },
    },
  } as unknown as Pick<Store, 'accounts' | 'tunnels'>;
  const watch = new PlanWatch({
    store,
    limitsFor: (plan) => LIMITS[plan],
    bindings: () => [...held.values()].map((accountId) => ({ accountId })),
    awayTunnels: () => [...away].map(([tunnelId, { accountId, boundAt }]) => ({ tunnelId, accountId, boundAt })),
    endTunnel: (tunnelId, code, message) => {
      if (!held.delete(tunnelId) && !away.delete(tunnelId)) return false;
      ended.push({ tunnelId, code, message });
      return true;
    },
    log: pino({ level: 'silent' }),
    now: () => clock,
  });
  return { watch, queries, ended, advance: (ms: number) => (clock += ms) };
}

function row(id: string, accountId: string, updatedAt: number, status: Tunnel['status'] = 'online'): Tunnel {
  return {
    id,
    accountId,
    hostname: `${id}.localhost`,
    status,
    pinned: true,
    localAddr: '',
    agentVersion: '',
    agentIp: '',
    nodeId: 'n',
    createdAt: 0,
    updatedAt,
    pool: false,
    proto: 'http',
  };
}

describe('PlanWatch', () => {
  it('ends the newest tunnels held here once the plan is lowered, and leaves the oldest', async () => {
    const held = new Map([
      ['t1', 'acc_pro'],
      ['t2', 'acc_pro'],
      ['t3', 'acc_pro'],
    ]);
    const rows = [row('t1', 'acc_pro', 100), row('t2', 'acc_pro', 200), row('t3', 'acc_pro', 300), row('t0', 'acc_pro', 50, 'offline')];
    const plans = new Map<string, Plan>([['acc_pro', 'pro']]);
    const { watch, ended } = watchOver(held, rows, plans);
    await watch.poll();
    assert.deepEqual(ended, [], 'within the pro plan');
    plans.set('acc_pro', 'free');
    await watch.poll();
    const message = planLoweredMessage('free', 1);
    assert.deepEqual(ended, [
      { tunnelId: 't2', code: ErrorCode.TUNNEL_LIMIT, message },
      { tunnelId: 't3', code: ErrorCode.TUNNEL_LIMIT, message },
    ]);
    assert.match(message, new RegExp(`^${Messages.TUNNEL_LIMIT}: the account's plan was lowered to free, which allows 1 tunnel,`));
    assert.deepEqual([...held.keys()], ['t1']);
  });

  it('ends only what this node holds of the newest counted on every node', async () => {
    // t3 is newest but held by another node: this node ends its own t2, the other node t3.
    const held = new Map([
      ['t1', 'acc'],
      ['t2', 'acc'],
    ]);
    const rows = [row('t1', 'acc', 100), row('t2', 'acc', 200), row('t3', 'acc', 300)];
    const { watch, ended } = watchOver(held, rows, new Map([['acc', 'free']]));
    await watch.planChanged('acc');
    assert.deepEqual(
      ended.map((e) => e.tunnelId),
      ['t2'],
    );
  });

  it('asks the store nothing while no account here has more tunnels than the smallest plan allows', async () => {
    const held = new Map([['t1', 'acc']]);
    const { watch, queries } = watchOver(held, [row('t1', 'acc', 100)], new Map([['acc', 'free']]));
    await watch.poll();
    await watch.poll();
    assert.deepEqual(queries, []);
  });

  it('reads every served account once per sweep, and counts the tunnels of one whose plan changed', async () => {
    const held = new Map([['t1', 'acc']]);
    const rows = [row('t1', 'acc', 100), row('t2', 'acc', 200)];
    const plans = new Map<string, Plan>([['acc', 'pro']]);
    const { watch, queries, ended, advance } = watchOver(held, rows, plans);
    advance(SWEEP_MS);
    await watch.poll();
    assert.deepEqual(queries, ['plansOf acc', 'countOnlineOf acc'], 'a sweep reads the plan and the count; within them, nothing more');
    plans.set('acc', 'free');
    await watch.poll();
    assert.equal(queries.length, 2, 'no sweep due yet');
    advance(SWEEP_MS);
    await watch.poll();
    // t2, newest, is another node's: this node's t1 stays; the account's tunnels were listed.
    assert.deepEqual(queries.slice(2), ['plansOf acc', 'countOnlineOf acc', 'listForAccount acc']);
    assert.deepEqual(ended, []);
  });

  it('finds at a sweep an account over its plan on every node, though never seen on another plan', async () => {
    // One tunnel here (the newest), one on another node: over a plan of one, unseen before.
    const held = new Map([['t2', 'acc']]);
    const rows = [row('t1', 'acc', 100), row('t2', 'acc', 200)];
    const { watch, ended, advance } = watchOver(held, rows, new Map([['acc', 'free']]));
    await watch.poll();
    assert.equal(ended.length, 0, 'one tunnel here is within the plan as far as this node alone can tell');
    advance(SWEEP_MS);
    await watch.poll();
    assert.deepEqual(
      ended.map((e) => e.tunnelId),
      ['t2'],
    );
  });

  it('counts a tunnel whose agent is away by when it came online: the older keeps its grace, the newer live one ends', async () => {
    // t1's agent was lost: its row went offline (later than t2 came online), its grace runs here.
    const held = new Map([['t2', 'acc']]);
    const away = new Map([['t1', { accountId: 'acc', boundAt: 100 }]]);
    const rows = [row('t1', 'acc', 900, 'offline'), row('t2', 'acc', 200)];
    const { watch, ended } = watchOver(held, rows, new Map([['acc', 'free']]), away);
    await watch.planChanged('acc');
    assert.deepEqual(
      ended.map((e) => e.tunnelId),
      ['t2'],
    );
    assert.deepEqual([...away.keys()], ['t1']);
  });

  it('ends the grace of a tunnel whose agent is away when it is among the newest beyond the plan', async () => {
    const held = new Map([['t1', 'acc']]);
    const away = new Map([['t2', { accountId: 'acc', boundAt: 200 }]]);
    const rows = [row('t1', 'acc', 100), row('t2', 'acc', 50, 'offline')];
    const { watch, ended } = watchOver(held, rows, new Map([['acc', 'free']]), away);
    await watch.planChanged('acc');
    assert.deepEqual(
      ended.map((e) => e.tunnelId),
      ['t2'],
    );
    assert.deepEqual([...held.keys()], ['t1']);
  });

  it('reads the plan of an account over the smallest plan with its away tunnels, and ends the newer once it is lowered', async () => {
    const away = new Map([['t2', { accountId: 'acc', boundAt: 200 }]]);
    const rows = [row('t1', 'acc', 100), row('t2', 'acc', 300, 'offline')];
    const plans = new Map<string, Plan>([['acc', 'pro']]);
    const { watch, ended, queries } = watchOver(new Map([['t1', 'acc']]), rows, plans, away);
    await watch.poll();
    assert.deepEqual(queries, ['plansOf acc'], 'one live and one away are more than the smallest plan allows');
    plans.set('acc', 'free');
    await watch.poll();
    assert.deepEqual(
      ended.map((e) => e.tunnelId),
      ['t2'],
    );
  });

  it('a notification for an account with no tunnel here costs no query', async () => {
    const { watch, queries } = watchOver(new Map([['t1', 'acc']]), [], new Map());
    await watch.planChanged('acc_elsewhere');
    assert.deepEqual(queries, []);
  });
});
