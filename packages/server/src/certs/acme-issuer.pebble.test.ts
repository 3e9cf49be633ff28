import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, createServer } from 'node:tls';
import { openStore, type Store } from '../store/index.js';
import { startChallTestSrv, type ChallTestSrv } from '@svcrouter/testkit/dns';
import { startHttp01Server, startPebble, trustInAcmeClient, type Pebble } from '@svcrouter/testkit/pebble';
import { requireTools } from '@svcrouter/testkit/tools';
import { createAcmeIssuer, type AcmeIssuer, type AcmeIssuerOptions } from './acme-issuer.js';
import { loadOrCreateDevCa, type DevCa } from './dev-ca.js';
import { createSniResolver } from './sni-resolver.js';

// The issuer against a real Pebble with real HTTP-01 validation: Pebble resolves
// each test host through pebble-challtestsrv (A → 127.0.0.1) and fetches the
// key authorization from a local HTTP server that asks the issuers.

const DAY_MS = 24 * 60 * 60 * 1000;

if (requireTools('ACME issuance against Pebble', ['pebble', 'pebble-challtestsrv', 'openssl'], 'pebble openssl')) {
  describe('acme issuer with Pebble', () => {
    let dns!: ChallTestSrv;
    let pebble!: Pebble;
    let store!: Store;
    let devCa!: DevCa;
    let dir!: string;
    let untrust!: () => void;
    let http01!: { port: number; close(): Promise<void> };
    const issuers: AcmeIssuer[] = [];

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'svc-acme-'));
      dns = await startChallTestSrv();
      // Every issuer of this suite may have placed the challenge being fetched.
      http01 = await startHttp01Server(async (token) => {
        for (const issuer of issuers) {
          const answer = await issuer.challengeResponse(token);
          if (answer !== undefined) return answer;
        }
        return undefined;
      });
      pebble = await startPebble({ dnsServer: dns.dnsServer, httpPort: http01.port });
      untrust = trustInAcmeClient(pebble.listenerCaPem);
      store = await openStore({ dataDir: join(dir, 'data') });
      devCa = await loadOrCreateDevCa(join(dir, 'data'));
    });
    after(async () => {
      await Promise.all(issuers.map((i) => i.close()));
      untrust?.();
      await store?.close();
      await pebble?.close();
      await http01?.close();
      await dns?.close();
      await rm(dir, { recursive: true, force: true });
    });

    function newIssuer(over: Partial<AcmeIssuerOptions> = {}): AcmeIssuer {
      const issuer = createAcmeIssuer({
        store,
        directoryUrl: pebble.directoryUrl,
        email: 'ops@svc.test',
        sharedDomain: 'localhost',
        // Pebble with PEBBLE_VA_NOSLEEP answers within milliseconds; acme-client's 5 s default poll would dominate.
        polling: { minMs: 20, maxMs: 200, attempts: 30 },
        ...over,
      });
      issuers.push(issuer);
      return issuer;
    }

    /** A verified domain whose host resolves to the challenge server for Pebble. */
    async function verifiedHost(address = '127.0.0.1'): Promise<string> {
      const host = `app-${randomBytes(4).toString('hex')}.example.test`;
      const account = await store.accounts.create({ email: `${host}@svc.test`, name: 'Owner', plan: 'pro' });
      const domain = await store.domains.create({ accountId: account.id, host, txtValue: 'svc-verify-x' });
      await store.domains.markVerified(domain.id);
      await dns.addA(host, [address]);
      return host;
    }

    /** Serves `host` through createSniResolver and handshakes trusting only Pebble's root. */
    async function handshake(issuer: AcmeIssuer, host: string): Promise<{ authorized: boolean; san: string | undefined }> {
      const resolver = createSniResolver({
        sharedDomain: 'localhost',
        devCa,
        isServedHost: issuer.isServedHost,
        onDemand: issuer.onDemand,
      });
      const server = createServer({ SNICallback: resolver.SNICallback, ...toKeyPair(await resolver.defaultCertificate()) }, (s) => s.end());
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      try {
        const { port } = server.address() as AddressInfo;
        const socket = connect({ host: '127.0.0.1', port, servername: host, ca: await pebble.rootPem() });
        await once(socket, 'secureConnect');
        const result = { authorized: socket.authorized, san: socket.getPeerCertificate().subjectaltname };
        socket.destroy();
        return result;
      } finally {
        server.close();
      }
    }

    it("issues a certificate for a verified host that chains to Pebble's root and records it", async () => {
      const host = await verifiedHost();
      const issuer = newIssuer();
      assert.deepEqual(await handshake(issuer, host), { authorized: true, san: `DNS:${host}` });
      assert.equal(issuer.stats().issued, 1);
      const stored = await store.certificates.get(host);
      assert.ok(stored !== undefined);
      assert.equal(stored.expiresAt, Date.parse(new X509Certificate(stored.certPem).validTo));
      const [domain] = await store.domains.byHost(host);
      assert.equal(domain?.certState, 'issued');
      assert.equal(domain?.certExpiresAt, stored.expiresAt);
      const account = await store.acme.get(pebble.directoryUrl);
      assert.match(account?.url ?? '', /^https:\/\/127\.0\.0\.1:\d+\//);
    });

    it('100 parallel onDemand calls for a new host place exactly one order', async () => {
      const host = await verifiedHost();
      const issuer = newIssuer();
      const certs = await Promise.all(Array.from({ length: 100 }, () => issuer.onDemand(host)));
      assert.equal(issuer.stats().ordersStarted, 1);
      assert.equal(new Set(certs.map((c) => c?.certPem)).size, 1);
      assert.ok(certs[0] !== undefined);
    });

    it('an unverified or unknown host gets no order', async () => {
      const account = await store.accounts.create({ email: `p-${randomBytes(4).toString('hex')}@svc.test`, name: 'P', plan: 'free' });
      const pending = `pending-${randomBytes(4).toString('hex')}.example.test`;
      await store.domains.create({ accountId: account.id, host: pending, txtValue: 'svc-verify-y' });
      await dns.addA(pending, ['127.0.0.1']);
      const issuer = newIssuer();
      for (const name of [pending, `x.${pending}`, 'unknown.example.test']) {
        assert.equal(await issuer.isServedHost(name), false);
        assert.equal(await issuer.onDemand(name), undefined);
      }
      assert.equal(issuer.stats().ordersStarted, 0);
    });

    it('a second issuer over the same store serves the stored certificate without ordering', async () => {
      const host = await verifiedHost();
      const first = await newIssuer().onDemand(host);
      const second = newIssuer();
      assert.equal((await second.onDemand(host))?.certPem, first?.certPem);
      assert.equal(second.stats().ordersStarted, 0);
    });

    it('a failed validation marks the domain failed with the reason, and backoff prevents an immediate re-order', async () => {
      // 127.0.0.2 is loopback too, but the challenge server listens on 127.0.0.1 only: connection refused.
      const host = await verifiedHost('127.0.0.2');
      const issuer = newIssuer();
      assert.equal(await issuer.onDemand(host), undefined);
      const [domain] = await store.domains.byHost(host);
      assert.equal(domain?.certState, 'failed');
      assert.match(domain?.certError ?? '', /127\.0\.0\.2|connection refused/i);
      assert.equal(await issuer.onDemand(host), undefined);
      assert.deepEqual(issuer.stats(), { ordersStarted: 1, issued: 0, failed: 1 });
      assert.equal(await store.certificates.get(host), undefined);
    });

    it('renewDue re-orders a stored certificate that expires within 30 days', async () => {
      const host = await verifiedHost();
      const old = await devCa.issueLeaf(host); // stands in for an ageing certificate
      await store.certificates.put({ host, ...old, expiresAt: Date.now() + 10 * DAY_MS, issuedAt: Date.now() - 80 * DAY_MS });
      const issuer = newIssuer();
      const report = await issuer.renewDue();
      assert.equal(report.renewed >= 1, true, JSON.stringify(report));
      const renewed = await store.certificates.get(host);
      assert.notEqual(renewed?.certPem, old.certPem);
      assert.ok((renewed?.expiresAt ?? 0) > Date.now() + 30 * DAY_MS);
      assert.deepEqual(await handshake(issuer, host), { authorized: true, san: `DNS:${host}` });
    });
  });
}

function toKeyPair(pem: { certPem: string; keyPem: string }): { cert: string; key: string } {
  return { cert: pem.certPem, key: pem.keyPem };
}
