import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ErrorCode, forward, SvcError, type Tunnel } from '@svcrouter/sdk';
import { requireTools } from '@svcrouter/testkit/tools';
import { api } from './harness/index.js';
import {
  ACME_PACKAGES,
  ACME_TOOLS,
  acmeOrders,
  addDomain,
  addVerified,
  freshHost,
  startDomainWorld,
  type DomainView,
  type DomainWorld,
} from './harness/domains-support.js';
import { answerHttp, curlHttps, selfSignedCertificate, startTlsService, type LocalCertificate } from './harness/tls-support.js';

// `svc tls --domain`: a verified custom domain whose TLS the local service terminates. The edge
// passes it through and, with a real ACME CA (Pebble) behind it, never orders a certificate for
// it; an unverified domain, or another account's, is refused as for HTTP.

if (requireTools('TLS tunnels on custom domains (Pebble)', ACME_TOOLS, ACME_PACKAGES)) {
  describe('TLS tunnels on custom domains', () => {
    let world: DomainWorld;
    let token: string;
    let domain: DomainView;
    let cert: LocalCertificate;
    let service: { port: number; close(): Promise<void> };
    let tunnel: Tunnel;
    let ordersBefore: number;

    before(async () => {
      world = await startDomainWorld({ acme: true });
      token = await world.server.createAccount(`tls-domains-${randomBytes(3).toString('hex')}@example.com`, 'pro');
      domain = await addVerified(world, token);
      cert = await selfSignedCertificate(domain.host);
      service = await startTlsService(cert, (socket) => answerHttp(socket, `local TLS for ${socket.servername}`));
      ordersBefore = await acmeOrders(world.server);
      tunnel = await forward({ proto: 'tls', addr: service.port, domain: domain.host, token, serverUrl: world.server.url });
    });
    after(async () => {
      await tunnel?.close();
      await service?.close();
      await cert?.close();
      await world?.close();
    });

    it("binds the verified domain: curl verifies the local service's certificate through the edge", async () => {
      assert.equal(tunnel.url, `tls://${domain.host}:${world.server.httpsPort}`);
      const result = await curlHttps(domain.host, world.server.httpsPort, cert.certPath);
      assert.ok(result.ok, result.stderr);
      assert.equal(result.stdout, `local TLS for ${domain.host}`);
    });

    it('orders no certificate for it: the edge holds no key for a passed-through name', async () => {
      assert.equal(await acmeOrders(world.server), ordersBefore);
      const view = (await api(world.server, 'GET', `/v1/domains/${domain.id}`, { token })).body as DomainView;
      assert.equal(view.certificate.state, 'none');
    });

    it('refuses a domain that is added but not verified, and another account’s verified one', async () => {
      const pending = await addDomain(world.server, token, freshHost('pending'));
      await assert.rejects(
        forward({ proto: 'tls', addr: service.port, domain: pending.host, token, serverUrl: world.server.url }),
        (error: unknown) => error instanceof SvcError && error.code === ErrorCode.DOMAIN_NOT_VERIFIED,
      );
      const otherToken = await world.server.createAccount(`tls-other-${randomBytes(3).toString('hex')}@example.com`, 'pro');
      const theirs = await addVerified(world, otherToken);
      await assert.rejects(
        forward({ proto: 'tls', addr: service.port, domain: theirs.host, token, serverUrl: world.server.url }),
        (error: unknown) =>
          error instanceof SvcError &&
          error.code === ErrorCode.DOMAIN_NOT_VERIFIED &&
          error.message === `custom domain ${theirs.host} is verified by another account; this account cannot bind it.`,
      );
    });
  });
}
