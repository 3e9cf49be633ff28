import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { api, startAgent, startOrigin, visit, type TestOrigin, type TestServer } from './harness/index.js';

// Three svc-server processes on one real PostgreSQL, restarted one at a time with SIGTERM under
// steady traffic: the agent given the three URLs moves its tunnel off each leaving node before
// that node lets it go, and no visitor request fails.

/** Bounds a hung test; not a timing assertion. */
const HANG = { timeout: 90_000 };
/**
 * A drain long enough that it never ends before the agent has moved, and a stopping node that
 * stays unready but accepting well past the visitors' next readiness check.
 */
const NODE_ENV = { SVC_DRAIN_MS: '15000', SVC_UNREADY_MS: '1000' };
/** How often the visitors' balancer checks each node's /readyz. */
const CHECK_MS = 100;

postgresSuite('cluster rolling restart suite', rollingSuite);

function rollingSuite(url: string): void {
  let database: TestDatabase;
  const nodes: TestServer[] = [];
  let origin: TestOrigin;
  let token: string;

  describe('a rolling restart of every edge node', () => {
    before(async () => {
      database = await freshDatabase(url);
      const a = await startNode(database.url, 'node-a', { first: true, env: NODE_ENV });
      token = a.token!;
      nodes.push(a, ...(await Promise.all(['node-b', 'node-c'].map((id) => startNode(database.url, id, { env: NODE_ENV })))));
      origin = await startOrigin();
    });

    after(async () => {
      await Promise.all(nodes.map((node) => node.close()));
      // A restarted node reuses the first one's data dir, which its close() does not remove.
      await Promise.all(nodes.map((node) => rm(node.dataDir, { recursive: true, force: true })));
      await origin?.close();
      await database?.drop();
    });

    it('SIGTERM on each node in turn, under visitors through every node: the agent moves first and no request fails', HANG, async () => {
      const urls = nodes.map((node) => node.url).join(',');
      const agent = await startAgent(nodes[0]!, { token, target: origin.port, env: { SVC_SERVER: urls } });
      const holders = (): Promise<string[]> => holdersOf(agent.hostname);
      let visitors: ReturnType<typeof balancedVisitors> | undefined;
      try {
        await until('the name is held on two nodes', async () => (await holders()).length === 2);
        for (const node of nodes) {
          await until(`${node.url} serves the tunnel`, async () => (await visit(node, agent.hostname, '/status/204')).status === 204);
        }

        visitors = balancedVisitors(nodes, agent.hostname);
        await until('visitors are being served', () => Promise.resolve(visitors!.ok >= 20));

        for (let index = 0; index < nodes.length; index++) {
          await restart(index);
          await until('the name is held on two nodes again', async () => (await holders()).length === 2);
          const servedAt = visitors.ok;
          await until('visitors are served after the restart', () => Promise.resolve(visitors!.ok >= servedAt + 10));
        }
        // Every node counts its links, its renewals and the requests it carried to or for the others.
        const metricsOf = async (node: TestServer): Promise<(name: string) => number> => {
          const text = (await api(node, 'GET', '/metrics')).text;
          return (name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
        };
        for (const node of nodes) {
          // Links to a node just restarted open as its peers learn of it; renewals run every 3 s.
          await until(`${node.url} has links to both peers and renewed its leases`, async () => {
            const value = await metricsOf(node);
            return value('svc_cluster_peer_links') === 2 && value('svc_cluster_lease_renewals_total') > 0;
          });
        }
        // The node without the agent carries every visitor it gets to another node. A restart
        // starts a node's counts again, so the requests forwarded to a node before its own restart
        // are gone from them: the visitors run on until one forwarded since the last restart is counted at both ends.
        let out = 0;
        let into = 0;
        await until('a request forwarded since the last restart is counted by both nodes', async () => {
          out = 0;
          into = 0;
          for (const node of nodes) {
            const value = await metricsOf(node);
            out += value('svc_cluster_forwarded_requests_total\\{direction="out"\\}');
            into += value('svc_cluster_forwarded_requests_total\\{direction="in"\\}');
          }
          return out > 0 && into > 0;
        });
        assert.ok(out > 0 && into > 0, `forwarded out ${out}, in ${into}`);
        const failures = await visitors.stop();
        assert.deepEqual(failures, []);
        assert.ok(visitors.ok > 50, `served ${visitors.ok}`);
        // The agent never lost both paths: no failure line, no reconnect.
        assert.doesNotMatch(agent.proc.output, /Connection to the edge lost/);
        assert.equal(agent.proc.lines.filter((line) => line.startsWith('Forwarding https://')).length, 1);
      } finally {
        await visitors?.stop();
        await agent.close();
      }
    });

    it('an agent given two URLs: SIGTERM on one of its nodes, it lets the name go there and no request fails', HANG, async () => {
      const agent = await startAgent(nodes[1]!, { token, target: origin.port, env: { SVC_SERVER: `${nodes[1]!.url},${nodes[2]!.url}` } });
      let visitors: ReturnType<typeof balancedVisitors> | undefined;
      try {
        await until('the name is held on B and C', async () => (await holdersOf(agent.hostname)).join() === 'node-b,node-c');
        await until(`A serves the tunnel`, async () => (await visit(nodes[0]!, agent.hostname, '/status/204')).status === 204);
        visitors = balancedVisitors(nodes, agent.hostname);
        await until('visitors are being served', () => Promise.resolve(visitors!.ok >= 20));
        await restart(1);
        // The agent dials B again once it is back, under the same name.
        await until('the name is held on B and C again', async () => (await holdersOf(agent.hostname)).join() === 'node-b,node-c');
        const servedAt = visitors.ok;
        await until('visitors are served after the restart', () => Promise.resolve(visitors!.ok >= servedAt + 10));
        assert.deepEqual(await visitors.stop(), []);
        assert.doesNotMatch(agent.proc.output, /Connection to the edge lost/);
      } finally {
        await visitors?.stop();
        await agent.close();
      }
    });
  });

  /** The nodes with a live claim on `hostname`, by id. */
  async function holdersOf(hostname: string): Promise<string[]> {
    const rows = await database.query('select node_id from cluster_routes where hostname = $1 and expires_at > $2 order by node_id', [
      hostname,
      Date.now(),
    ]);
    return rows.map((row) => String(row.node_id));
  }

  /** SIGTERM to node `index`, a clean exit, then the same node again on the same ports. */
  async function restart(index: number): Promise<void> {
    const leaving = nodes[index]!;
    assert.deepEqual(await leaving.proc.kill('SIGTERM'), { code: 0, signal: null });
    nodes[index] = await startNode(database.url, `node-${'abc'[index]}`, { env: NODE_ENV, restartOf: leaving });
  }
}

/**
 * Visitors as a TCP load balancer with health checks sends them, three loops: round the nodes
 * whose /readyz answered 200 at the last check, and a refused connection goes to the next node
 * (HAProxy's redispatch). Anything else (a reset, a 5xx, a 404) is a failed request. `nodes` is
 * read at each request, so a restarted node put in its place is used.
 */
function balancedVisitors(nodes: TestServer[], hostname: string): { readonly ok: number; stop(): Promise<string[]> } {
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const ready = nodes.map(() => true);
  const checks = nodes.map(async (_, index) => {
    while (running) {
      ready[index] = await fetch(`${nodes[index]!.url}/readyz`).then(
        (res) => res.status === 200,
        () => false,
      );
      await new Promise((resolve) => setTimeout(resolve, CHECK_MS));
    }
  });
  const loop = async (offset: number): Promise<void> => {
    for (let turn = offset; running; turn++) {
      let passed = 0;
      for (;;) {
        const index = (turn + passed) % nodes.length;
        const node = nodes[index]!;
        if (!ready[index] && passed < nodes.length) {
          passed++;
          continue;
        }
        try {
          const res = await visit(node, hostname, '/status/204');
          if (res.status === 204) ok++;
          else failures.push(`${node.url}: ${res.status} ${res.text.slice(0, 200)}`);
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED' && passed < nodes.length * 20) {
            passed++;
            continue;
          }
          failures.push(`${node.url}: ${(error as Error).message}`);
          break;
        }
      }
    }
  };
  const loops = [0, 1, 2].map(loop);
  return {
    get ok() {
      return ok;
    },
    async stop() {
      running = false;
      await Promise.all([...loops, ...checks]);
      return failures;
    },
  };
}
