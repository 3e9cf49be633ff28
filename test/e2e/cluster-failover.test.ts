import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AgentSession, ErrorCode, Messages, SvcError, type BindRequest } from '@svcrouter/sdk';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { api, startAgent, startOrigin, visit, type TestOrigin, type TestServer } from './harness/index.js';

// Three svc-server processes on one real PostgreSQL: an agent given the three URLs holds its
// tunnel through two of them and survives the death of one; binds of one account on the three
// nodes at once never pass the plan's tunnel limit.

/** Bounds a hung test; not a timing assertion. */
const HANG = { timeout: 60_000 };
/** The free plan's tunnel limit. */
const FREE_TUNNELS = 10;
const MiB = 1024 * 1024;
/** The pro plan's monthly transfer here, small enough to pass with two uploads. */
const PRO_QUOTA = 4 * MiB;
const PLANS = JSON.stringify({ pro: { bandwidthBytes: PRO_QUOTA } });
/** Polls of 50 ms for a plan change to reach a node: 5 s, far below the nodes' own 60 s refresh. */
const PLAN_CHANGE_ATTEMPTS = 100;

postgresSuite('cluster failover suite', failoverSuite);

/** used.bandwidthBytes of GET /v1/usage on one node: the stored total as of its last flush, plus its own unflushed bytes. */
async function usedOn(node: TestServer, token: string): Promise<number> {
  const usage = await api(node, 'GET', '/v1/usage', { token });
  return (usage.body as { used: { bandwidthBytes: number } }).used.bandwidthBytes;
}

/** A tunnel as a bare session sees it: nothing served, only bound or refused. */
function bareTunnel(request: BindRequest) {
  return {
    bindRequest: request,
    handleStream: () => undefined,
    onReconnecting: () => undefined,
    onRebound: () => undefined,
    onEnded: () => undefined,
  };
}

function failoverSuite(url: string): void {
  describe('agents and limits across edge nodes', () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let c: TestServer;
    let origin: TestOrigin;
    let token: string;

    before(async () => {
      database = await freshDatabase(url);
      a = await startNode(database.url, 'node-a', { first: true, env: { SVC_PLANS: PLANS } });
      token = a.token!;
      [b, c] = await Promise.all([
        startNode(database.url, 'node-b', { env: { SVC_PLANS: PLANS } }),
        startNode(database.url, 'node-c', { env: { SVC_PLANS: PLANS } }),
      ]);
      origin = await startOrigin();
    });

    after(async () => {
      await Promise.all([a, b, c].map((node) => node?.close()));
      await origin?.close();
      await database?.drop();
    });

    it('binds of one account on three nodes at once: exactly the plan limit succeed, the rest get the limit error', HANG, async () => {
      const limited = await a.createAccount('limits@example.test', 'free');
      const sessions = [a, b, c].map((node) => new AgentSession({ serverUrl: node.url, token: limited }, false));
      await Promise.all(sessions.map((session) => session.connect()));
      try {
        // Six binds per node, all sent before any answer: 18 against a limit of 10.
        const binds = sessions.flatMap((session) =>
          Array.from({ length: 6 }, () => {
            const request: BindRequest = { local: 'localhost:3000' };
            return session.bind(request, bareTunnel(request));
          }),
        );
        const results = await Promise.allSettled(binds);
        const bound = results.filter((r) => r.status === 'fulfilled');
        const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
        assert.equal(bound.length, FREE_TUNNELS);
        assert.equal(refused.length, 18 - FREE_TUNNELS);
        for (const error of refused) {
          assert.ok(error instanceof SvcError, String(error));
          assert.equal(error.code, ErrorCode.TUNNEL_LIMIT);
          assert.equal(error.message, Messages.TUNNEL_LIMIT);
        }
        const online = await database.query(
          `select count(*)::int as n from tunnels t join accounts acc on acc.id = t.account_id where acc.email = $1 and t.status = 'online'`,
          ['limits@example.test'],
        );
        assert.equal(online[0]!.n, FREE_TUNNELS);
      } finally {
        await Promise.all(sessions.map((session) => session.close()));
      }
    });

    it(
      'transfer through different nodes counts towards one quota: each node moved less, every node refuses once the sum passed it, and a plan change lifts it on every node at once',
      HANG,
      async () => {
        const quotaToken = await a.createAccount('quota@example.test', 'pro');
        const agent = await startAgent(a, { token: quotaToken, target: origin.port });
        try {
          for (const node of [b, c]) {
            await until(`${node.url} serves the tunnel`, async () => (await visit(node, agent.hostname, '/status/204')).status === 204);
          }
          // 3 MiB through B, then 3 MiB through C: neither node alone reaches the 4 MiB quota.
          const upload = Buffer.alloc(3 * MiB, 0x61);
          assert.equal((await visit(b, agent.hostname, '/upload', { method: 'POST', body: upload })).status, 200);
          // C may already know B's bytes and cut this one off at the quota: either way it is metered.
          await visit(c, agent.hostname, '/upload', { method: 'POST', body: upload }).catch(() => undefined);
          // Each node learns the shared total at its next flush (a request of its own starts one).
          for (const node of [a, b, c]) {
            await until(`${node.url} refuses the account`, async () => {
              const page = await visit(node, agent.hostname, '/status/204');
              return page.status === 429 && page.text.includes(Messages.BANDWIDTH_LIMIT);
            });
          }
          const used = await usedOn(b, quotaToken);
          assert.ok(used > PRO_QUOTA, `stored total ${used}`);
          // The overshoot is what the other node moved before its flush told it: here C's upload.
          assert.ok(used - PRO_QUOTA <= 3 * MiB + 64 * 1024, `overshoot ${used - PRO_QUOTA}`);

          // A plan change from the account command reaches every node at once (NOTIFY), not at
          // their next refresh a minute later: the free plan's transfer is far above this total.
          const changed = await a.cli(['account', 'plan', '--email', 'quota@example.test', '--plan', 'free']);
          assert.equal(changed.code, 0, changed.stderr);
          for (const node of [a, b, c]) {
            await until(
              `${node.url} serves the account on its new plan`,
              async () => (await visit(node, agent.hostname, '/status/204')).status === 204,
              PLAN_CHANGE_ATTEMPTS,
            );
          }
        } finally {
          await agent.close();
        }
      },
    );

    it(
      'an agent given three URLs holds its name on two nodes; A killed, visitors through B and C lose at most the requests in flight on A, and the agent is on two nodes again',
      HANG,
      async () => {
        const agent = await startAgent(a, { token, target: origin.port, env: { SVC_SERVER: `${a.url},${b.url},${c.url}` } });
        const holders = async (): Promise<string[]> =>
          (await database.query('select node_id from cluster_routes where hostname = $1 order by node_id', [agent.hostname])).map((row) =>
            String(row.node_id),
          );
        try {
          // The random name the first node gave is bound under the same name on the second.
          await until('the name is held on A and B', async () => (await holders()).join() === 'node-a,node-b');
          for (const node of [b, c]) {
            await until(`${node.url} serves the tunnel`, async () => (await visit(node, agent.hostname, '/status/204')).status === 204);
          }

          // Visitors in a loop through the nodes that stay: two loops through B, two through C.
          let running = true;
          let ok = 0;
          const failures: string[] = [];
          const loop = async (node: TestServer): Promise<void> => {
            while (running) {
              try {
                const res = await visit(node, agent.hostname, '/status/204');
                if (res.status === 204) ok++;
                else failures.push(`${node.url}: ${res.status}`);
              } catch (error) {
                failures.push(`${node.url}: ${(error as Error).message}`);
              }
            }
          };
          const loops = [b, b, c, c].map(loop);
          await until('visitors are being served', () => Promise.resolve(ok >= 20));
          a.proc.child.kill('SIGKILL');
          await a.proc.exited;
          const servedBeforeRecovery = ok;
          // The agent replaces its session on A with one on C (the URL after A that B does not hold).
          await agent.proc.waitForLine(/^Edge node http:\/\/\S+ lost \(.+\); still forwarding through the other node$/);
          await agent.proc.waitForLine(/^Forwarding through two edge nodes again \(http:\/\/\S+ replaces the lost one\)$/);
          await until('the name is held on B and C', async () => {
            const held = await holders();
            return held.includes('node-b') && held.includes('node-c');
          });
          const recoveredAt = ok;
          await until('visitors are served after the recovery', () => Promise.resolve(ok >= recoveredAt + 20));
          running = false;
          await Promise.all(loops);
          // Only a request through C that C had just handed to A could fail: one per loop through C.
          assert.ok(failures.length <= 2, `failed requests: ${failures.join('; ')}`);
          assert.ok(ok > servedBeforeRecovery);
          // One Forwarding line for the tunnel, however many nodes hold it.
          assert.equal(agent.proc.lines.filter((line) => line.startsWith('Forwarding https://')).length, 1);
          assert.doesNotMatch(agent.proc.output, /Connection to the edge lost/);
        } finally {
          await agent.close();
        }
      },
    );
  });
}
