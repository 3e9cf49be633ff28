import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SseClient } from '@svcrouter/testkit/sse-client';
import { eventually } from './harness/api-helpers.js';
import { freshDatabase, postgresSuite, startNode, until, type TestDatabase } from './harness/cluster-support.js';
import { api, startAgent, visit, type TestAgent, type TestServer } from './harness/index.js';
import { closedPort } from './harness/pool-support.js';

// Routes on a cluster: two svc-server processes on one real PostgreSQL, the agent's session on
// node A with a route to a second local service, visitors through node B. B learns the routes
// with the cluster route, so what it records and the pages it shows are what A would.

interface Service {
  port: number;
  close(): Promise<void>;
}

/** A local service that answers `<name> <path>`. */
async function startService(name: string): Promise<Service> {
  const server = http.createServer((request, response) => response.end(`${name} ${request.url}`));
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Row {
  path: string;
  target: string | null;
  status: number;
}

postgresSuite('routes cluster suite', (baseUrl) => {
  describe('routes on several edge nodes', { timeout: 120_000 }, () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let token: string;
    let web: Service;
    let apiService: Service;
    let down: number;
    let agent: TestAgent;
    const open: SseClient[] = [];

    const records = async (node: TestServer, hostname: string): Promise<Row[]> =>
      ((await api(node, 'GET', `/v1/requests?host=${hostname}&limit=100`, { token })).body as { requests: Row[] }).requests;

    before(async () => {
      database = await freshDatabase(baseUrl);
      a = await startNode(database.url, 'node-a', { first: true });
      token = a.token!;
      b = await startNode(database.url, 'node-b');
      [web, apiService] = await Promise.all([startService('web'), startService('api')]);
      down = await closedPort();
      agent = await startAgent(a, {
        token,
        target: web.port,
        subdomain: 'routed',
        args: ['--route', `/api=${apiService.port}`, '--route', `/down=127.0.0.1:${down}`],
      });
      await until(`${agent.hostname} routed through B`, async () => (await visit(b, agent.hostname, '/ready')).text === 'web /ready');
    });
    after(async () => {
      for (const client of open) client.close();
      await agent?.close();
      await Promise.all([a, b].map((node) => node?.close()));
      await Promise.all([web, apiService].map((service) => service?.close()));
      await database?.drop();
    });

    it("serves each path from its target through B, and both nodes' records name that target, live and stored", async () => {
      const live = await SseClient.open(`${b.url}/v1/requests/stream?host=${agent.hostname}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      open.push(live);
      await live.until((events) => events.length >= 1, 'the stream to open');

      assert.equal((await visit(b, agent.hostname, '/api/x')).text, 'api /api/x');
      assert.equal((await visit(b, agent.hostname, '/main-mark')).text, 'web /main-mark');
      const expected: Record<string, string> = {
        '/api/x': `localhost:${apiService.port}`,
        '/main-mark': `localhost:${web.port}`,
      };
      const paths = Object.keys(expected);

      await live.until(
        (events) => paths.every((p) => events.some((event) => event.event === 'request' && (JSON.parse(event.data!) as Row).path === p)),
        'both requests on the live stream',
      );
      for (const event of live.named()) {
        const row = JSON.parse(event.data!) as Row;
        if (row.path in expected) assert.equal(row.target, expected[row.path], `live ${row.path}`);
      }
      for (const node of [a, b]) {
        const stored = await eventually(
          () => records(node, agent.hostname),
          (rows) => paths.every((p) => rows.some((row) => row.path === p)),
          'both requests stored',
        );
        for (const p of paths) assert.equal(stored.find((row) => row.path === p)!.target, expected[p], `${node.url} ${p}`);
      }
    });

    it("a route whose local service is down gets the 502 page naming the route's target through B", async () => {
      const answer = await visit(b, agent.hostname, '/down/x');
      assert.equal(answer.status, 502);
      assert.match(answer.text, new RegExp(`could not reach 127\\.0\\.0\\.1:${down}\\.`));
      assert.doesNotMatch(answer.text, new RegExp(`:${web.port}`));
      const stored = await eventually(
        () => records(b, agent.hostname),
        (rows) => rows.some((row) => row.path === '/down/x'),
        'the 502 stored',
      );
      const row = stored.find((r) => r.path === '/down/x')!;
      assert.equal(row.status, 502);
      assert.equal(row.target, `127.0.0.1:${down}`);
    });

    it('GET /v1/tunnels lists the same routes on both nodes', async () => {
      const routesOn = async (node: TestServer) => {
        const listed = (await api(node, 'GET', '/v1/tunnels', { token })).body as {
          tunnels: Array<{ host: string; routes: Array<{ path: string; local: string }> }>;
        };
        return listed.tunnels.find((tunnel) => tunnel.host === agent.hostname)!.routes;
      };
      const expected = [
        { path: '/api', local: `localhost:${apiService.port}` },
        { path: '/down', local: `127.0.0.1:${down}` },
      ];
      assert.deepEqual(await routesOn(a), expected);
      assert.deepEqual(await routesOn(b), expected);
    });

    it('routes too many and too long for a cluster notification still reach B', async () => {
      // Thirty-two routes of long paths: their JSON is longer than a PostgreSQL notification takes.
      const long = (i: number) => `/${String(i).padStart(2, '0')}${'x'.repeat(240)}`;
      const args = Array.from({ length: 32 }, (_, i) => ['--route', `${long(i)}=127.0.0.1:${down}`]).flat();
      const wide = await startAgent(a, { token, target: web.port, subdomain: 'wide', args });
      try {
        await until(`${wide.hostname} routed through B`, async () => (await visit(b, wide.hostname, '/')).text === 'web /');
        // B names the route's target once it has read the routes from the cluster route's row.
        await until('the route target on B', async () => {
          const answer = await visit(b, wide.hostname, `${long(31)}/x`);
          return answer.status === 502 && answer.text.includes(`could not reach 127.0.0.1:${down}.`);
        });
      } finally {
        await wide.close();
      }
    });
  });
});
