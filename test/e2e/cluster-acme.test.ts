import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startChallTestSrv, type ChallTestSrv } from '@svcrouter/testkit/dns';
import { startPebble, type Pebble } from '@svcrouter/testkit/pebble';
import { requireTools } from '@svcrouter/testkit/tools';
import { freePort } from '@svcrouter/testkit';
import { freshDatabase, startNode, until, type TestDatabase, postgresSuite } from './harness/cluster-support.js';
import { ACME_PACKAGES, ACME_TOOLS, acmeOrders, addVerified, handshake, type Handshake } from './harness/domains-support.js';
import { api, tempDir, visit, type TestServer } from './harness/index.js';

// Two svc-server processes on one real PostgreSQL and a real Pebble whose HTTP-01 validation
// reaches node B's HTTP port only: certificates A orders are validated through B, served by
// both, ordered once however many nodes are asked at once, and forgotten by both when the
// domain is removed.

/** Bounds a hung test; not a timing assertion. */
const HANG = { timeout: 120_000 };

postgresSuite('cluster ACME suite', (baseUrl) => {
  if (requireTools('cluster ACME (Pebble)', ACME_TOOLS, ACME_PACKAGES)) clusterAcmeSuite(baseUrl);
});

function clusterAcmeSuite(url: string): void {
  describe('ACME certificates on two nodes', () => {
    let database: TestDatabase;
    let dns: ChallTestSrv;
    let pebble: Pebble;
    let temp: Awaited<ReturnType<typeof tempDir>>;
    let root: string;
    let a: TestServer;
    let b: TestServer;
    let token: string;

    before(async () => {
      database = await freshDatabase(url);
      dns = await startChallTestSrv();
      temp = await tempDir('svc-cluster-acme-');
      // Pebble fetches every HTTP-01 answer from this port: node B's, never A's.
      const portOfB = await freePort();
      pebble = await startPebble({ dnsServer: dns.dnsServer, httpPort: portOfB });
      const caFile = path.join(temp.dir, 'pebble-listener.pem');
      await writeFile(caFile, pebble.listenerCaPem);
      root = await pebble.rootPem();
      const env = {
        SVC_DNS_SERVERS: dns.dnsServer,
        SVC_EDGE_TARGET: '127.0.0.1',
        SVC_ACME_DIRECTORY: pebble.directoryUrl,
        SVC_ACME_EMAIL: 'ops@svc.test',
        NODE_EXTRA_CA_CERTS: caFile,
      };
      a = await startNode(database.url, 'node-a', { first: true, env });
      b = await startNode(database.url, 'node-b', { env, httpPort: portOfB });
      assert.notEqual(a.httpPort, b.httpPort);
      token = await a.createAccount('cluster-acme@example.com', 'pro');
    });

    after(async () => {
      await Promise.all([a, b].map((node) => node?.close()));
      await pebble?.close();
      await dns?.close();
      await temp?.remove();
      await database?.drop();
    });

    const orders = async (): Promise<{ a: number; b: number }> => ({ a: await acmeOrders(a), b: await acmeOrders(b) });
    const fingerprint = (shake: Handshake): string =>
      shake.ok && shake.authorized ? shake.leaf.fingerprint256 : `failed: ${JSON.stringify(shake)}`;

    let removable: { id: string; host: string } | undefined;

    it('a certificate A orders is validated through B, then served by B from the store without an order', HANG, async () => {
      const domain = await addVerified({ dns, server: a }, token);
      const before = await orders();
      const onA = await handshake(a, domain.host, root);
      assert.ok(onA.ok && onA.authorized, JSON.stringify(onA));
      assert.ok(onA.leaf.checkHost(domain.host));
      const onB = await handshake(b, domain.host, root);
      assert.equal(fingerprint(onB), onA.leaf.fingerprint256);
      const now = await orders();
      assert.deepEqual({ a: now.a - before.a, b: now.b - before.b }, { a: 1, b: 0 });
      // The answer and the lease lived only while the order ran.
      assert.deepEqual(await database.query('select count(*)::int as n from acme_challenges'), [{ n: 0 }]);
      assert.deepEqual(await database.query('select count(*)::int as n from acme_order_leases'), [{ n: 0 }]);
      // A token no node is being challenged with falls through to routing on B, as on one node.
      const unknown = await visit(b, domain.host, `/.well-known/acme-challenge/${'x'.repeat(43)}`);
      assert.equal(unknown.status, 404);
      assert.match(unknown.text, /This tunnel is offline/);
      removable = domain;
    });

    it('first handshakes on both nodes at once place one order in the whole cluster', HANG, async () => {
      const domain = await addVerified({ dns, server: b }, token);
      const before = await orders();
      const shakes = await Promise.all(Array.from({ length: 40 }, (_, i) => handshake(i % 2 === 0 ? a : b, domain.host, root)));
      const prints = new Set(shakes.map(fingerprint));
      assert.equal(prints.size, 1, [...prints].join('\n'));
      assert.ok(![...prints][0]!.startsWith('failed'));
      const now = await orders();
      assert.equal(now.a - before.a + (now.b - before.b), 1);
    });

    it('removing the domain on A makes B stop serving its certificate too', HANG, async () => {
      assert.ok(removable, 'the first test left a domain with a certificate');
      assert.ok((await handshake(b, removable.host, root)).ok, 'B serves it before the removal');
      const removed = await api(a, 'DELETE', `/v1/domains/${removable.id}`, { token });
      assert.equal(removed.status, 204, removed.text);
      const host = removable.host;
      // The other node hears of it through the cluster bus, a moment later.
      await until(`${host} no longer served by B`, async () => !(await handshake(b, host, root)).ok);
      assert.equal((await handshake(a, host, root)).ok, false);
      assert.deepEqual(await database.query('select count(*)::int as n from certificates where host = $1', [host]), [{ n: 0 }]);
    });
  });
}
