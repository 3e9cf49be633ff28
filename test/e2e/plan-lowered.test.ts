import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Messages } from '@svcrouter/protocol';
import { freshDatabase, startNode, until, type TestDatabase } from './harness/cluster-support.js';
import {
  AGENT_BIN,
  spawnNode,
  startAgent,
  startOrigin,
  startServer,
  visit,
  type Proc,
  type TestAgent,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';
import { startMemberService, type MemberService } from './harness/pool-support.js';
import { startTcpService, tcpPortRange } from './harness/tcp-support.js';

// An account's plan lowered below its live tunnel count with `svc-server account plan`, run as a
// process of its own against the server's store: the newest tunnels beyond the new limit end
// (their agents exit 1 with the refusal a bind over the limit gets), their names are free at
// once and answer the offline page at once, and the oldest within the limit serve on. On one
// node (SQLite, found by the node's poll) and on two nodes sharing PostgreSQL (told at once).

const HANG = { timeout: 90_000 };
/** The smaller plan allows one tunnel; the pro plan keeps its default. */
const PLANS = JSON.stringify({ free: { tunnels: 1 } });
/** Far beyond every bound below: a visitor held for a reconnect, or a name kept, fails the test. */
const KEPT_MS = '120000';
/** Bound on the agents' exit after the command returns: the node's poll (2 s) and the agent's exit, on a busy machine. */
const ENDED_WITHIN_MS = 15_000;
/** Bound on an offline page: at once, nowhere near KEPT_MS. */
const OFFLINE_WITHIN_MS = 3_000;
const LOWERED = /Tunnel limit reached: the account's plan was lowered to free, which allows 1 tunnel/;

/** Whether the edge has logged holding a request for `label` (see Edge.hold). */
function heldAny(server: TestServer, label: string): boolean {
  const held = new RegExp(`${label}\\.localhost.*request held for a reconnect`);
  return [...server.proc.lines, ...server.proc.stderrLines].some((line) => held.test(line));
}

/** Lowers the account to the free plan through the account command, as its own process. */
async function lower(server: TestServer, email: string, online: number): Promise<number> {
  const changed = await server.cli(['account', 'plan', '--email', email, '--plan', 'free']);
  assert.equal(changed.code, 0, changed.stderr);
  assert.match(changed.stdout, /is now on the free plan/);
  assert.match(
    changed.stdout,
    new RegExp(`It has ${online} tunnels online and the plan allows 1: the ${online - 1} newest are being ended`),
  );
  return performance.now();
}

/** Waits for an agent ended by the lowered plan: exit 1, the reason printed, within the bound. */
async function endedByPlan(agent: Proc, since: number): Promise<void> {
  let bound: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    const left = Math.max(0, ENDED_WITHIN_MS - (performance.now() - since));
    bound = setTimeout(
      () => reject(new Error(`the agent still ran ${ENDED_WITHIN_MS} ms after the plan was lowered:\n${agent.output}`)),
      left,
    );
  });
  const exit = await Promise.race([agent.exited, late]).finally(() => clearTimeout(bound));
  assert.equal(exit.code, 1, agent.output);
  assert.match(agent.output, LOWERED);
  // The hint a bind over the limit gets, too.
  assert.match(agent.output, /move the account to a plan with more tunnels/);
  const took = performance.now() - since;
  assert.ok(took < ENDED_WITHIN_MS, `the agent ended ${Math.round(took)} ms after the plan was lowered`);
}

/** The offline page for `hostname` through `server`, answered at once (no hold). */
async function offlineAtOnce(server: TestServer, hostname: string): Promise<void> {
  const started = performance.now();
  const page = await visit(server, hostname, '/');
  const took = performance.now() - started;
  assert.equal(page.status, 404, `${hostname}: ${page.status} ${page.text.slice(0, 200)}`);
  assert.match(page.text, new RegExp(Messages.TUNNEL_OFFLINE));
  assert.ok(took < OFFLINE_WITHIN_MS, `the offline page of ${hostname} took ${Math.round(took)} ms`);
}

/** Starts `svc tcp <port>` and resolves with the process and the edge port it was given. */
async function startTcpAgent(server: TestServer, token: string, port: number): Promise<{ proc: Proc; port: number }> {
  const proc = spawnNode(AGENT_BIN, ['tcp', String(port)], { SVC_SERVER: server.url, SVC_TOKEN: token }, 'agent');
  const match = await proc.waitForLine(/^Forwarding tcp:\/\/[^\s]+:(\d+) -> /);
  return { proc, port: Number(match[1]) };
}

describe('a plan lowered below the tunnel count, on one node', () => {
  let origin: TestOrigin;
  let echo: Awaited<ReturnType<typeof startTcpService>>;
  let server: TestServer;
  let otherToken: string;
  const agents: Proc[] = [];
  before(async () => {
    origin = await startOrigin();
    echo = await startTcpService();
    // One TCP port: whoever binds a TCP tunnel after the lowered account's ended gets it only if it was freed.
    server = await startServer({
      env: { SVC_PLANS: PLANS, SVC_HOLD_MS: KEPT_MS, SVC_NAME_GRACE_MS: KEPT_MS, SVC_TCP_PORTS: await tcpPortRange(1) },
    });
    otherToken = await server.createAccount('other@example.com', 'pro');
  });
  after(async () => {
    await Promise.all(agents.map((agent) => agent.stop('SIGINT')));
    await server?.close();
    await echo?.close();
    await origin?.close();
  });

  it('ends the two newest of three tunnels: their agents exit 1, names and port free at once; the oldest serves on', HANG, async () => {
    const token = await server.createAccount('lowered@example.com', 'pro');
    const oldest = await startAgent(server, { token, target: origin.port, subdomain: 'oldest' });
    const second = await startAgent(server, { token, target: origin.port, subdomain: 'second' });
    const tcp = await startTcpAgent(server, token, echo.port);
    agents.push(oldest.proc, second.proc, tcp.proc);

    const since = await lower(server, 'lowered@example.com', 3);
    await Promise.all([endedByPlan(second.proc, since), endedByPlan(tcp.proc, since)]);
    await offlineAtOnce(server, 'second.localhost');
    assert.ok(!heldAny(server, 'second'), 'a visitor was held for an agent the plan ended');

    // The names are another account's to take at once: no grace period kept them.
    const taker = await startAgent(server, { token: otherToken, target: origin.port, subdomain: 'second' });
    assert.equal((await visit(server, 'second.localhost', '/')).text, 'hello from origin');
    assert.equal((await taker.close()).code, 0);
    const tcpTaker = await startTcpAgent(server, otherToken, echo.port);
    assert.equal(tcpTaker.port, tcp.port, 'the only TCP port was given back');
    await tcpTaker.proc.stop('SIGINT');

    // The oldest, within the new limit, was never touched.
    assert.equal((await visit(server, 'oldest.localhost', '/')).text, 'hello from origin');
    assert.equal(oldest.proc.child.exitCode, null);
    assert.equal((await oldest.close()).code, 0);
  });

  it('counts pool members as tunnels: the newer member ends and the name serves on through the older', HANG, async () => {
    const token = await server.createAccount('pooled@example.com', 'pro');
    const services: MemberService[] = [await startMemberService('one'), await startMemberService('two')];
    try {
      const members: TestAgent[] = [];
      for (const service of services) {
        members.push(await startAgent(server, { token, target: service.port, subdomain: 'pooled', args: ['--pool'] }));
      }
      agents.push(...members.map((member) => member.proc));
      const since = await lower(server, 'pooled@example.com', 2);
      await endedByPlan(members[1]!.proc, since);
      for (let i = 0; i < 4; i++) assert.equal((await visit(server, 'pooled.localhost', '/')).text, 'member one');
      assert.equal((await members[0]!.close()).code, 0);
    } finally {
      await Promise.all(services.map((service) => service.close()));
    }
  });
});

const baseUrl = process.env.SVC_TEST_DATABASE_URL;
const SKIP_NOTICE = 'skipping the plan-lowered cluster suite: set SVC_TEST_DATABASE_URL (apt-get install postgresql)';

if (baseUrl === undefined || baseUrl === '') {
  if (process.env.CI === 'true') {
    it('a plan lowered on a cluster', () => assert.fail('SVC_TEST_DATABASE_URL is unset; CI must run the cluster suites'));
  } else {
    process.stderr.write(`${SKIP_NOTICE}\n`);
    it('a plan lowered on a cluster', { skip: SKIP_NOTICE }, () => {});
  }
} else {
  describe('a plan lowered below the tunnel count, on two nodes sharing PostgreSQL', () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let origin: TestOrigin;
    const agents: Proc[] = [];
    before(async () => {
      database = await freshDatabase(baseUrl);
      const env = { SVC_PLANS: PLANS, SVC_HOLD_MS: KEPT_MS, SVC_NAME_GRACE_MS: KEPT_MS };
      a = await startNode(database.url, 'node-a', { first: true, env });
      b = await startNode(database.url, 'node-b', { env });
      origin = await startOrigin();
    });
    after(async () => {
      await Promise.all(agents.map((agent) => agent.stop('SIGINT')));
      await Promise.all([a, b].map((node) => node?.close()));
      await origin?.close();
      await database?.drop();
    });

    it('ends the newest tunnels on whichever node holds them; their names are free on both at once', HANG, async () => {
      const token = await a.createAccount('lowered@example.com', 'pro');
      const otherToken = await a.createAccount('other@example.com', 'pro');
      // The oldest and a newer one on A, one on B, and the newest held on both (an agent given both URLs).
      const oldest = await startAgent(a, { token, target: origin.port, subdomain: 'c-oldest' });
      const middle = await startAgent(b, { token, target: origin.port, subdomain: 'c-middle' });
      const newer = await startAgent(a, { token, target: origin.port, subdomain: 'c-newer' });
      const both = await startAgent(a, { token, target: origin.port, subdomain: 'c-both', env: { SVC_SERVER: `${a.url},${b.url}` } });
      agents.push(oldest.proc, middle.proc, newer.proc, both.proc);
      const heldOn = async (hostname: string): Promise<string> =>
        (await database.query('select node_id from cluster_routes where hostname = $1 order by node_id', [hostname]))
          .map((row) => String(row.node_id))
          .join();
      await until('c-both is held on A and B', async () => (await heldOn('c-both.localhost')) === 'node-a,node-b');
      for (const node of [a, b]) {
        for (const label of ['c-middle', 'c-newer']) {
          await until(`${node.url} serves ${label}`, async () => (await visit(node, `${label}.localhost`, '/')).status === 200);
        }
      }

      const since = await lower(a, 'lowered@example.com', 4);
      await Promise.all([endedByPlan(middle.proc, since), endedByPlan(newer.proc, since), endedByPlan(both.proc, since)]);
      // The node that held each answers offline at once; the other once the route's removal reached it.
      await offlineAtOnce(b, 'c-middle.localhost');
      await offlineAtOnce(a, 'c-newer.localhost');
      await offlineAtOnce(a, 'c-both.localhost');
      await offlineAtOnce(b, 'c-both.localhost');
      for (const [node, label] of [
        [a, 'c-middle'],
        [b, 'c-newer'],
      ] as const) {
        await until(`${node.url} answers ${label} offline`, async () => (await visit(node, `${label}.localhost`, '/')).status === 404, 40);
        await offlineAtOnce(node, `${label}.localhost`);
      }
      for (const node of [a, b]) {
        for (const label of ['c-middle', 'c-newer', 'c-both']) assert.ok(!heldAny(node, label), `${node.url} held a visitor for ${label}`);
      }

      // Another account takes the names at once, each through a node that did not hold it.
      for (const [node, label] of [
        [a, 'c-middle'],
        [b, 'c-newer'],
        [b, 'c-both'],
      ] as const) {
        const taker = await startAgent(node, { token: otherToken, target: origin.port, subdomain: label });
        assert.equal((await visit(node, taker.hostname, '/')).text, 'hello from origin');
        assert.equal((await taker.close()).code, 0);
      }

      for (const node of [a, b]) assert.equal((await visit(node, 'c-oldest.localhost', '/')).text, 'hello from origin');
      assert.equal(oldest.proc.child.exitCode, null);
      assert.equal((await oldest.close()).code, 0);
    });
  });
}
