import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { api, startAgent, type TestAgent, type TestServer } from './harness/index.js';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { sequentialGets, startMemberService, tally, type MemberService } from './harness/pool-support.js';

// Two svc-server nodes on one real PostgreSQL, a pool with a member on each.

postgresSuite('pool cluster suite', poolClusterSuite);

function poolClusterSuite(url: string): void {
  describe('a pool with members on two nodes', { timeout: 120_000 }, () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let token: string;
    const services: MemberService[] = [];
    const agents: TestAgent[] = [];

    before(async () => {
      database = await freshDatabase(url);
      a = await startNode(database.url, 'node-a', { first: true });
      token = a.token!;
      b = await startNode(database.url, 'node-b');
      for (const [name, node] of [
        ['a', a],
        ['b', b],
      ] as const) {
        const service = await startMemberService(name);
        services.push(service);
        agents.push(await startAgent(node, { token, target: service.port, subdomain: 'spread', args: ['--pool'] }));
      }
    });
    after(async () => {
      await Promise.all(agents.map((agent) => agent.close()));
      await Promise.all(services.map((service) => service.close()));
      await b?.close();
      await a?.close();
      await database?.drop();
    });

    it('keeps both members: neither node takes the name over from the other', async () => {
      // Each node learned of the other's claim by now: both members serve through their own node.
      await until('both nodes see both routes', async () => {
        const rows = await database.query(`select node_id from cluster_routes where hostname = 'spread.localhost'`);
        return rows.length === 2;
      });
      assert.deepEqual(tally(await sequentialGets(a, 'spread.localhost', 4)), { 'member a': 4 });
      assert.deepEqual(tally(await sequentialGets(b, 'spread.localhost', 4)), { 'member b': 4 });
      const listed = (await api(b, 'GET', '/v1/tunnels', { token })).body as {
        tunnels: Array<{ host: string; pool: boolean; status: string }>;
      };
      const members = listed.tunnels.filter((tunnel) => tunnel.host === 'spread.localhost');
      assert.equal(members.length, 2);
      assert.ok(members.every((tunnel) => tunnel.pool && tunnel.status === 'online'));
    });

    it('a node whose member left sends the requests to the member on the other node', async () => {
      await agents[0]!.close();
      agents.shift();
      await until('node a routes through node b', async () => {
        const answer = await sequentialGets(a, 'spread.localhost', 1).catch(() => []);
        return answer[0] === 'member b';
      });
      assert.deepEqual(tally(await sequentialGets(a, 'spread.localhost', 6)), { 'member b': 6 });
    });
  });
}
