import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startAgent, startOrigin, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { visitFrom, type Answer } from './harness/access-support.js';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { startMemberService, type MemberService } from './harness/pool-support.js';

// The rate limit on a cluster: two svc-server processes on one real PostgreSQL, real agents with
// --rate-limit, one visitor alternating between the nodes. The limit is one limit for the whole
// cluster: exactly N requests pass in total, then both nodes answer 429 with Retry-After. For one
// agent every request is counted on the node holding it, wherever it entered; for a pool whose
// members sit on different nodes (each node serving its own member) only the store's shared count
// holds the limit: counted in each node's memory, 2N would pass (checked on 2026-12-06 by swapping
// the limiter: the pool case then fails).

postgresSuite('rate limit on a cluster', rateLimitClusterSuite);

/** The visitor's requests, alternating A, B, A, B…, from one source address. */
async function alternate(nodes: readonly TestServer[], hostname: string, from: string, count: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < count; i++) answers.push(await visitFrom(nodes[i % nodes.length]!, hostname, '/echo', { from }));
  return answers;
}

function assertRefused(answer: Answer): void {
  assert.equal(answer.status, 429, answer.text);
  const retryAfter = Number(answer.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 120, `Retry-After ${String(answer.headers['retry-after'])}`);
}

function rateLimitClusterSuite(url: string): void {
  describe('a rate limit on two nodes', { timeout: 120_000 }, () => {
    const LIMIT = 5;
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let origin: TestOrigin;
    let agent: TestAgent;
    const services: MemberService[] = [];
    const members: TestAgent[] = [];

    before(async () => {
      database = await freshDatabase(url);
      a = await startNode(database.url, 'node-a', { first: true });
      b = await startNode(database.url, 'node-b');
      origin = await startOrigin();
      agent = await startAgent(a, { token: a.token, target: origin.port, subdomain: 'limited', args: ['--rate-limit', `${LIMIT}/1m`] });
      // The route travels by NOTIFY: wait until B carries the tunnel, from an address the limit then forgets.
      await until(
        `${agent.hostname} routed through B`,
        async () => (await visitFrom(b, agent.hostname, '/echo', { from: '127.0.0.9' })).status === 200,
      );
    });
    after(async () => {
      await Promise.all([agent, ...members].map((running) => running?.close()));
      await Promise.all(services.map((service) => service.close()));
      await Promise.all([a, b].map((node) => node?.close()));
      await origin?.close();
      await database?.drop();
    });

    it(`lets exactly ${LIMIT} requests of a visitor alternating between the nodes through, then 429 with Retry-After on both`, async () => {
      const seenBefore = origin.seen.length;
      const answers = await alternate([a, b], agent.hostname, '127.0.0.5', LIMIT + 4);
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [...Array<number>(LIMIT).fill(200), 429, 429, 429, 429],
      );
      for (const refused of answers.slice(LIMIT)) assertRefused(refused);
      // Refused requests never reached the local service.
      assert.equal(origin.seen.length - seenBefore, LIMIT);
      // Counted per visitor address: another one still passes, through either node.
      assert.equal((await visitFrom(b, agent.hostname, '/echo', { from: '127.0.0.6' })).status, 200);
      assert.equal((await visitFrom(a, agent.hostname, '/echo', { from: '127.0.0.6' })).status, 200);
    });

    it(`counts a pool with a member on each node once: ${LIMIT} in total, not ${LIMIT} per node`, async () => {
      for (const [name, node] of [
        ['a', a],
        ['b', b],
      ] as const) {
        const service = await startMemberService(name);
        services.push(service);
        members.push(
          await startAgent(node, {
            token: a.token,
            target: service.port,
            subdomain: 'spread',
            args: ['--pool', '--rate-limit', `${LIMIT}/1m`],
          }),
        );
      }
      await until('both nodes see both members', async () => {
        const rows = await database.query(`select node_id from cluster_routes where hostname = 'spread.localhost'`);
        return rows.length === 2;
      });
      const answers = await alternate([a, b], 'spread.localhost', '127.0.0.7', LIMIT + 3);
      assert.deepEqual(
        answers.map((answer) => answer.status),
        [...Array<number>(LIMIT).fill(200), 429, 429, 429],
      );
      for (const refused of answers.slice(LIMIT)) assertRefused(refused);
      // Each node served its own member: the count really was shared between two nodes.
      const served = answers.slice(0, LIMIT).map((answer) => answer.text);
      assert.ok(served.includes('member a') && served.includes('member b'), served.join(', '));
      assert.equal(services[0]!.seen + services[1]!.seen, LIMIT);
    });
  });
}
