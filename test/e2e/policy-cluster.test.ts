import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sign as signGithub } from '@octokit/webhooks-methods';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { startAgent, startOrigin, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { visitFrom, visitH2 } from './harness/access-support.js';
import { send, type Echo } from './harness/policy-support.js';

// Traffic rules on a cluster: two svc-server processes on one real PostgreSQL, the agent's session
// on node A, visitors through node B. The node holding the agent applies the rules to requests
// that entered anywhere, so they hold the same way through either node.

const SECRET = 'cluster-webhook-secret';

postgresSuite('traffic rules on a cluster', (baseUrl) => {
  describe('traffic rules on several edge nodes', () => {
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
        subdomain: 'shaped',
        args: [
          '--request-header-add',
          'X-Env: cluster',
          '--response-header-remove',
          'X-Origin',
          '--response-header-add',
          'X-Frame-Options: DENY',
          '--rate-limit',
          '4/1m',
        ],
      });
      await until(
        `${agent.hostname} routed through B`,
        async () => (await visitFrom(b, agent.hostname, '/echo', { from: '127.0.0.9' })).status === 200,
      );
    });
    after(async () => {
      await agent?.close();
      await Promise.all([a, b].map((node) => node?.close()));
      await origin?.close();
      await database?.drop();
    });

    it('applies header rules both ways to requests entering through another node, on HTTP/1.1 and HTTP/2', async () => {
      for (const answer of [
        await visitFrom(b, agent.hostname, '/echo', { headers: { 'x-env': 'forged' } }),
        await visitH2(b, agent.hostname, '/echo'),
      ]) {
        assert.equal(answer.status, 200);
        const echo = JSON.parse(answer.text) as Echo;
        assert.equal(echo.headers['x-env'], 'cluster');
        assert.equal(echo.headers['x-forwarded-for'], '127.0.0.1');
        assert.equal(answer.headers['x-origin'], undefined);
        assert.equal(answer.headers['x-frame-options'], 'DENY');
      }
    });

    it('counts one visitor alternating between the nodes against one limit', async () => {
      const from = '127.0.0.3';
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++)
        statuses.push((await visitFrom(i % 2 === 0 ? a : b, agent.hostname, '/echo?alternating', { from })).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
      assert.equal(origin.seen.filter((r) => r.url === '/echo?alternating').length, 4);
    });

    it('checks webhook signatures for requests that entered through another node', async () => {
      const hooked = await startAgent(a, {
        token: a.token,
        target: origin.port,
        subdomain: 'hooked',
        args: ['--verify-webhook', `github:${SECRET}`],
      });
      try {
        await until('hooked routed through B', async () => (await send(b, hooked.hostname, 'POST', '/echo', 'x')).status === 403);
        const body = JSON.stringify({ zen: 'Keep it logically awesome.' });
        const passed = await send(b, hooked.hostname, 'POST', '/echo', body, { 'x-hub-signature-256': await signGithub(SECRET, body) });
        assert.equal(passed.status, 200);
        assert.equal((JSON.parse(passed.text) as Echo).bodyLength, Buffer.byteLength(body));
        const refused = await send(b, hooked.hostname, 'POST', '/echo', body, { 'x-hub-signature-256': await signGithub('other', body) });
        assert.equal(refused.status, 403);
        assert.match(refused.text, /signature mismatch/);
      } finally {
        await hooked.close();
      }
    });
  });
});
