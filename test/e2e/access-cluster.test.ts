import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BindMessages } from '@svcrouter/protocol';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { runAgent, startAgent, startOrigin, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { basic, visitFrom } from './harness/access-support.js';

// Access rules on a cluster: two svc-server processes on one real PostgreSQL, the agent's session
// on node A, visitors through node B. The rules hold wherever a request enters, the sign-in limit
// counts across nodes, and no node lets a bind without rules take the protected name over.

const PASSWORD = 'cluster-pass-1';

postgresSuite('access rules on a cluster', (baseUrl) => {
  describe('access rules on several edge nodes', () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let origin: TestOrigin;
    let agent: TestAgent;

    before(async () => {
      database = await freshDatabase(baseUrl);
      a = await startNode(database.url, 'node-a', { first: true });
      b = await startNode(database.url, 'node-b');
      origin = await startOrigin();
      agent = await startAgent(a, {
        token: a.token,
        target: origin.port,
        subdomain: 'vault',
        args: ['--basic-auth', `alice:${PASSWORD}`, '--cidr-deny', '127.0.0.2'],
      });
      // The route travels by NOTIFY: wait until B carries the tunnel (a 401 comes from A's rules).
      await until(`${agent.hostname} routed through B`, async () => (await visitFrom(b, agent.hostname, '/echo')).status === 401);
    });
    after(async () => {
      await agent?.close();
      await Promise.all([a, b].map((node) => node?.close()));
      await origin?.close();
      await database?.drop();
    });

    it('applies basic auth to requests entering through another node, and strips the header there too', async () => {
      const answer = await visitFrom(b, agent.hostname, '/echo', { headers: { authorization: basic('alice', PASSWORD) } });
      assert.equal(answer.status, 200);
      const echo = JSON.parse(answer.text) as { headers: Record<string, string> };
      assert.equal(echo.headers.authorization, undefined);
      assert.equal(echo.headers['x-forwarded-for'], '127.0.0.1');
      assert.equal((await visitFrom(b, agent.hostname, '/echo', { headers: { authorization: basic('alice', 'wrong-pass') } })).status, 401);
    });

    it("matches the visitor's own address on the entry node, not the node-to-node hop", async () => {
      const denied = await visitFrom(b, agent.hostname, '/echo', {
        from: '127.0.0.2',
        headers: { authorization: basic('alice', PASSWORD) },
      });
      assert.equal(denied.status, 403);
      assert.match(denied.text, /Access denied/);
    });

    it('counts failed sign-ins across nodes: 10 through B, then 429 through A', async () => {
      const from = '127.0.0.3';
      for (let i = 0; i < 10; i++) {
        const answer = await visitFrom(b, agent.hostname, '/echo', { from, headers: { authorization: basic('alice', `guess-${i}-x`) } });
        assert.equal(answer.status, 401);
      }
      assert.equal(
        (await visitFrom(a, agent.hostname, '/echo', { from, headers: { authorization: basic('alice', PASSWORD) } })).status,
        429,
      );
    });

    it('refuses a bind without rules on another node that would take over the protected name', async () => {
      const result = await runAgent(['http', String(origin.port)], { SVC_SERVER: b.url, SVC_TOKEN: a.token, SVC_SUBDOMAIN: 'vault' });
      assert.equal(result.code, 1);
      assert.ok(result.stderr.includes(BindMessages.policyRequired(agent.hostname)), result.stderr);
      assert.equal((await visitFrom(b, agent.hostname, '/echo')).status, 401);
    });
  });
});
