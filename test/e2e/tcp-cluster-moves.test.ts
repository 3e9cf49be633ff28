import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ApiClient, forward, type Tunnel } from '@svcrouter/sdk';
import type { TestServer } from './harness/index.js';
import { freshDatabase, startNode, until, type TestDatabase } from './harness/cluster-support.js';
import { answers, exchange, SECOND_HOST, startNodeOn } from './harness/tcp-cluster-support.js';
import { portOf, startTcpService, tcpPortRange } from './harness/tcp-support.js';

// A TCP tunnel whose agent moves between the two nodes of a cluster (through a load balancer
// that switches its backend), and a pool whose members sit on different nodes: in both, the
// port stays one port and answers at either node.
// Node ids of this file's own: the cluster's notifications reach every schema of the test
// database, and another suite's `node-a` leaving would read as this file's node leaving.

const SKIP_NOTICE = 'skipping the TCP cluster moves suite: set SVC_TEST_DATABASE_URL (apt-get install postgresql)';
const baseUrl = process.env.SVC_TEST_DATABASE_URL;
const A_HOST = '127.0.0.1';
const B_HOST = SECOND_HOST;

if (baseUrl === undefined || baseUrl === '') {
  if (process.env.CI === 'true') {
    it('tcp cluster moves suite', () => assert.fail('SVC_TEST_DATABASE_URL is unset; CI must run the TCP cluster moves suite'));
  } else {
    process.stderr.write(`${SKIP_NOTICE}\n`);
    it('tcp cluster moves suite', { skip: SKIP_NOTICE }, () => {});
  }
} else {
  movesSuite(baseUrl);
}

function movesSuite(url: string): void {
  describe('TCP tunnels moving between nodes', { timeout: 180_000 }, () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    const services: Array<{ close(): Promise<void> }> = [];

    before(async () => {
      database = await freshDatabase(url);
      const range = await tcpPortRange(100);
      a = await startNode(database.url, 'moves-a', { first: true, env: { SVC_TCP_PORTS: range } });
      b = await startNodeOn(database.url, 'moves-b', B_HOST, range);
    });
    after(async () => {
      await Promise.all(services.map((service) => service.close()));
      await b?.close();
      await a?.close();
      await database?.drop();
    });

    /** A service that answers each connection with `name` and what it read. */
    async function namedService(name: string): Promise<number> {
      const service = await startTcpService((socket) => {
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('end', () => socket.end(`${name}:${Buffer.concat(chunks).toString()}`));
      });
      services.push(service);
      return service.port;
    }

    it('a reconnect that lands on the other node keeps the port, and both nodes serve it', async () => {
      const balancer = await startBalancer({ host: A_HOST, port: a.httpPort });
      const tunnel = await forward({ proto: 'tcp', addr: await namedService('moved'), token: a.token!, serverUrl: balancer.url });
      try {
        const port = portOf(tunnel.url);
        await until('node b serves the port held on node a', () => answers(B_HOST, port));
        // The balancer now sends agents to node b, and drops the agent's connection to node a.
        balancer.switchTo({ host: B_HOST, port: b.httpPort });
        const [again] = (await once(tunnel, 'reconnected')) as [string];
        assert.equal(again, tunnel.url);
        await until('the route is node b', async () => {
          const rows = await database.query(`select node_id from cluster_routes where hostname = $1`, [`localhost:${port}`]);
          return rows.length === 1 && rows[0]!.node_id === 'moves-b';
        });
        await until('node a serves the port held on node b', () => answers(A_HOST, port));
        assert.equal(await exchange(A_HOST, port, 'via a'), 'moved:via a');
        assert.equal(await exchange(B_HOST, port, 'via b'), 'moved:via b');
      } finally {
        await tunnel.close();
        await balancer.close();
      }
    });

    it('a pool with a member on each node: each node serves its own, and the other once its own left', async () => {
      // A pool's members find each other by a reserved address.
      const reserved = await new ApiClient({ baseUrl: a.url, token: a.token! }).tcpAddresses.reserve();
      const first = await forward({
        proto: 'tcp',
        addr: await namedService('member a'),
        token: a.token!,
        serverUrl: a.url,
        pool: true,
        remoteAddr: reserved.addr,
      });
      const port = portOf(first.url);
      const bUrl = `http://${B_HOST}:${b.httpPort}`;
      let second: Tunnel | undefined;
      try {
        second = await forward({
          proto: 'tcp',
          addr: await namedService('member b'),
          token: a.token!,
          serverUrl: bUrl,
          pool: true,
          remoteAddr: `localhost:${port}`,
        });
        assert.equal(second.url, first.url);
        await until('both nodes hold a route', async () => {
          const rows = await database.query(`select node_id from cluster_routes where hostname = $1`, [`localhost:${port}`]);
          return rows.length === 2;
        });
        assert.equal(await exchange(A_HOST, port, '1'), 'member a:1');
        assert.equal(await exchange(B_HOST, port, '2'), 'member b:2');
        await first.close();
        await until(
          'node a sends the port to the member on node b',
          async () => (await exchange(A_HOST, port, '3').catch(() => '')) === 'member b:3',
        );
        assert.equal(await exchange(A_HOST, port, '4'), 'member b:4');
      } finally {
        await first.close();
        await second?.close();
      }
    });
  });
}

/** A TCP load balancer in front of the nodes' agent port: one backend at a time, switched by the test. */
async function startBalancer(backend: { host: string; port: number }): Promise<{
  url: string;
  switchTo(next: { host: string; port: number }): void;
  close(): Promise<void>;
}> {
  let target = backend;
  const open = new Set<Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    switchTo(next) {
      target = next;
      for (const socket of open) socket.destroy();
    },
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
