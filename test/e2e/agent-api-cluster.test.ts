import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { startAgent, startOrigin, visit, type TestOrigin, type TestServer } from './harness/index.js';

// The agent API on an agent given two edge URLs: a tunnel it starts is held through both nodes,
// as the tunnels it started with are.

/** Bounds a hung test; not a timing assertion. */
const HANG = { timeout: 60_000 };

postgresSuite('agent API cluster suite', clusterSuite);

function clusterSuite(url: string): void {
  describe('agent API across edge nodes', () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let origin: TestOrigin;

    before(async () => {
      database = await freshDatabase(url);
      a = await startNode(database.url, 'node-a', { first: true });
      b = await startNode(database.url, 'node-b');
      origin = await startOrigin();
    });

    after(async () => {
      await Promise.all([a, b].map((node) => node?.close()));
      await origin?.close();
      await database?.drop();
    });

    it('a tunnel started through the API is bound on both nodes and survives the first one dying', HANG, async () => {
      const agent = await startAgent(a, {
        token: a.token,
        target: origin.port,
        env: { SVC_SERVER: `${a.url},${b.url}` },
        args: ['--inspect-addr', '127.0.0.1:0'],
      });
      try {
        const inspector = (await agent.proc.waitForLine(/^Inspector (http:\/\/127\.0\.0\.1:\d+)$/))[1]!;
        const holders = async (hostname: string): Promise<string> =>
          (await database.query('select node_id from cluster_routes where hostname = $1 order by node_id', [hostname]))
            .map((row) => String(row.node_id))
            .join();
        await until('the first tunnel is held on A and B', async () => (await holders(agent.hostname)) === 'node-a,node-b');
        const response = await fetch(`${inspector}/api/tunnels`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'added', addr: origin.port }),
        });
        assert.equal(response.status, 201);
        const added = new URL(((await response.json()) as { url: string }).url).hostname;
        await until('the added tunnel is held on A and B', async () => (await holders(added)) === 'node-a,node-b');
        a.proc.child.kill('SIGKILL');
        await a.proc.exited;
        await until('B serves the added tunnel once A is gone', async () => (await visit(b, added, '/status/204')).status === 204);
      } finally {
        await agent.close();
      }
    });
  });
}
