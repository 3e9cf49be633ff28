import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { forward, type Tunnel } from '@svcrouter/sdk';
import { api, type TestServer } from './harness/index.js';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { answerHttp, curlHttps, selfSignedCertificate, startTlsService, type LocalCertificate } from './harness/tls-support.js';

// Two svc-server nodes on one real PostgreSQL: a TLS tunnel's agent on node a, a visitor entering
// node b. Node b reads SNI only once it knows of a TLS route, and sends the raw connection to a.

postgresSuite('tls cluster suite', tlsClusterSuite);

function tlsClusterSuite(url: string): void {
  describe('a TLS tunnel on a two-node cluster', { timeout: 120_000 }, () => {
    let database: TestDatabase;
    let a: TestServer;
    let b: TestServer;
    let cert: LocalCertificate;
    let service: Awaited<ReturnType<typeof startTlsService>>;
    let tunnel: Tunnel;
    const host = 'far.localhost';

    before(async () => {
      database = await freshDatabase(url);
      a = await startNode(database.url, 'node-a', { first: true });
      b = await startNode(database.url, 'node-b');
      cert = await selfSignedCertificate(host);
      service = await startTlsService(cert, (socket) => answerHttp(socket, 'the local service behind node a'));
      tunnel = await forward({ proto: 'tls', addr: service.port, subdomain: 'far', token: a.token!, serverUrl: a.url });
    });
    after(async () => {
      await tunnel?.close();
      await service?.close();
      await cert?.close();
      await b?.close();
      await a?.close();
      await database?.drop();
    });

    it('a visitor entering the other node reaches the local service and verifies its certificate', async () => {
      // Node b learns of the route by the cluster's notification; until then it serves the name itself.
      await until('node b passes the TLS name through', async () => (await curlHttps(host, b.httpsPort, cert.certPath)).ok);
      const result = await curlHttps(host, b.httpsPort, cert.certPath);
      assert.ok(result.ok, result.stderr);
      assert.equal(result.stdout, 'the local service behind node a');
      const rows = await database.query(`select proto from cluster_routes where hostname = $1`, [host]);
      assert.deepEqual(rows, [{ proto: 'tls' }]);
    });

    it('the entry node records the connection; the tunnel is listed as tls on both nodes', async () => {
      await until('a TLS record', async () => {
        const body = (await api(b, 'GET', '/v1/requests', { token: a.token! })).body as {
          requests: Array<{ method: string; host: string }>;
        };
        return body.requests.some((r) => r.method === 'TLS' && r.host === host);
      });
      for (const node of [a, b]) {
        const listed = (await api(node, 'GET', '/v1/tunnels', { token: a.token! })).body as {
          tunnels: Array<{ host: string; proto: string; url: string; status: string }>;
        };
        const found = listed.tunnels.find((t) => t.host === host);
        assert.equal(found?.proto, 'tls');
        assert.equal(found?.status, 'online');
      }
    });

    it('svc-server cluster status counts it as a TLS tunnel of node a', async () => {
      const { code, stdout } = await a.cli(['cluster', 'status', '--json']);
      assert.equal(code, 0);
      const nodes = (JSON.parse(stdout) as { nodes: Array<{ nodeId: string; tls: number }> }).nodes;
      assert.equal(nodes.find((n) => n.nodeId === 'node-a')?.tls, 1);
      assert.equal(nodes.find((n) => n.nodeId === 'node-b')?.tls, 0);
    });
  });
}
