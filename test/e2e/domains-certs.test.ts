import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { openStore } from '@svcrouter/server/store';
import { requireTools } from '@svcrouter/testkit/tools';
import { api, visit } from './harness/index.js';
import {
  ACME_PACKAGES,
  ACME_TOOLS,
  acmeOrders,
  addDomain,
  addVerified,
  freshHost,
  handshake,
  inParallel,
  logLine,
  startDomainWorld,
  type DomainView,
  verifyDomain,
  type DomainWorld,
} from './harness/domains-support.js';

// Certificates for custom domains, issued on the first TLS handshake by a real Pebble
// that validates HTTP-01 against the real server's HTTP port, through real DNS.

if (requireTools('custom-domain certificates (Pebble)', ACME_TOOLS, ACME_PACKAGES)) {
  describe('custom-domain certificates', () => {
    let world: DomainWorld;
    let token: string;

    before(async () => {
      world = await startDomainWorld({ acme: true });
      token = await world.server.createAccount(`certs-${randomBytes(3).toString('hex')}@example.com`, 'pro');
    });
    after(async () => {
      await world?.close();
    });

    const domainOf = async (id: string): Promise<DomainView> =>
      (await api(world.server, 'GET', `/v1/domains/${id}`, { token })).body as DomainView;

    it('the first HTTPS request to a verified host gets a certificate from Pebble, chained to its root', async () => {
      const domain = await addVerified(world, token);
      assert.equal(domain.certificate.state, 'none');
      const before = await acmeOrders(world.server);
      const page = await visit({ ...world.server, caPem: world.root }, domain.host, '/', { secure: true });
      assert.equal(page.status, 404);
      assert.match(page.text, /This tunnel is offline/);
      const shake = await handshake(world.server, domain.host, world.root);
      assert.ok(shake.ok && shake.authorized, JSON.stringify(shake));
      assert.ok(shake.leaf.checkHost(domain.host));
      assert.ok(shake.leaf.verify(new X509Certificate(shake.issuerPem).publicKey), 'leaf signed by the intermediate sent');
      assert.equal((await acmeOrders(world.server)) - before, 1);
      const after = await domainOf(domain.id);
      assert.equal(after.certificate.state, 'issued');
      assert.equal(after.certificate.expiresAt, new Date(shake.leaf.validTo).toISOString());
    });

    it('100 parallel first handshakes place exactly one order and all get the certificate', async () => {
      const domain = await addVerified(world, token);
      const before = await acmeOrders(world.server);
      const results = await Promise.all(Array.from({ length: 100 }, () => handshake(world.server, domain.host, world.root)));
      const fingerprints = new Set(results.map((r) => (r.ok && r.authorized ? r.leaf.fingerprint256 : `failed: ${JSON.stringify(r)}`)));
      assert.equal(fingerprints.size, 1, [...fingerprints].join('\n'));
      assert.ok(![...fingerprints][0]!.startsWith('failed'));
      assert.equal((await acmeOrders(world.server)) - before, 1);
    });

    it('10,000 random SNI names, unverified or under a verified domain without a tunnel, place no order', async () => {
      const domain = await addVerified(world, token);
      const before = await acmeOrders(world.server);
      const names = Array.from({ length: 10_000 }, (_, i) =>
        i % 10 === 0 ? `r${randomBytes(5).toString('hex')}.${domain.host}` : `r${randomBytes(5).toString('hex')}.example.test`,
      );
      const results = await inParallel(names, 64, (name) => handshake(world.server, name, world.root));
      assert.equal(results.filter((r) => r.ok).length, 0);
      assert.equal(await acmeOrders(world.server), before);
      assert.equal((await domainOf(domain.id)).certificate.state, 'none');
    });

    it('a failed order shows in the certificate state with its reason, and backs off instead of ordering again', async () => {
      // 127.0.0.2 is loopback, but the server listens on 127.0.0.1 only: Pebble's HTTP-01 fetch is refused.
      const domain = await addDomain(world.server, token, freshHost('fail'));
      await world.dns.addTxt(domain.txtRecord.name, domain.txtRecord.value);
      await world.dns.addA(domain.host, ['127.0.0.2']);
      assert.equal((await verifyDomain(world.server, token, domain.id)).body.state, 'verified');
      const before = await acmeOrders(world.server);
      assert.equal((await handshake(world.server, domain.host, world.root)).ok, false);
      const failed = await domainOf(domain.id);
      assert.equal(failed.certificate.state, 'failed');
      assert.ok(failed.certificate.error && failed.certificate.error.length > 0);
      assert.equal((await handshake(world.server, domain.host, world.root)).ok, false);
      await logLine(world.server, 'acme order deferred', domain.host);
      assert.equal((await acmeOrders(world.server)) - before, 1);
    });

    it('keeps certificates in the store and never returns a private key through the API', async () => {
      const list = await api(world.server, 'GET', '/v1/domains', { token });
      assert.equal(list.status, 200);
      assert.ok(!list.text.includes('PRIVATE KEY') && !list.text.includes('BEGIN CERTIFICATE'));
      const issued = (list.body as { domains: DomainView[] }).domains.filter((d) => d.certificate.state === 'issued');
      assert.ok(issued.length >= 1);
      const store = await openStore({ dataDir: world.server.dataDir });
      try {
        for (const d of issued) assert.match((await store.certificates.get(d.host))?.keyPem ?? '', /PRIVATE KEY/);
      } finally {
        await store.close();
      }
    });

    it('after a restart, the stored certificate is served without a new order', async () => {
      const host = freshHost('restart');
      const domain = await addVerified(world, token, host);
      const first = await handshake(world.server, host, world.root);
      assert.ok(first.ok && first.authorized);
      const server = await world.restart();
      const second = await handshake(server, host, world.root);
      assert.ok(second.ok && second.authorized, JSON.stringify(second));
      assert.equal(second.leaf.fingerprint256, first.leaf.fingerprint256);
      assert.equal(await acmeOrders(server), 0);
      assert.equal((await domainOf(domain.id)).certificate.state, 'issued');
    });
  });
}
