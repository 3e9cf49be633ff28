import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { requireTools } from '@svcrouter/testkit/tools';
import {
  ACME_PACKAGES,
  ACME_TOOLS,
  addDomain,
  addVerified,
  freshHost,
  handshake,
  verifyDomain,
  startDomainWorld,
  type DomainWorld,
} from './harness/domains-support.js';
import { addWebhook, startReceiver, type Receiver } from './harness/webhook-support.js';

// domain.verified, certificate.issued and certificate.failed made to happen for real: TXT
// records on a real DNS server (pebble-challtestsrv), certificates from a real Pebble.

if (requireTools('webhooks for domains and certificates (Pebble)', ACME_TOOLS, ACME_PACKAGES)) {
  describe('webhooks for custom domains and certificates', () => {
    let world: DomainWorld;
    let receiver: Receiver;
    let token: string;

    before(async () => {
      world = await startDomainWorld({ acme: true, env: { SVC_WEBHOOK_ALLOW_PRIVATE: 'true' } });
      token = await world.server.createAccount(`hooks-${randomBytes(3).toString('hex')}@example.com`, 'pro');
      receiver = await startReceiver();
      await addWebhook(world.server, token, receiver, ['domain.verified', 'certificate.issued', 'certificate.failed']);
    });
    after(async () => {
      await receiver?.close();
      await world?.close();
    });

    it('sends domain.verified when the TXT record checks out, then certificate.issued after Pebble issues', async () => {
      const domain = await addVerified(world, token);
      const verified = await receiver.next((r) => r.type === 'domain.verified' && r.envelope.data.host === domain.host);
      assert.equal(verified.verified, true);
      assert.equal(verified.envelope.data.state, 'verified');
      assert.equal(verified.envelope.data.id, domain.id);

      const shake = await handshake(world.server, domain.host, world.root);
      assert.ok(shake.ok && shake.authorized, JSON.stringify(shake));
      const issued = await receiver.next((r) => r.type === 'certificate.issued' && r.envelope.data.host === domain.host);
      assert.equal(issued.verified, true);
      assert.equal(issued.envelope.data.expiresAt, new Date(shake.leaf.validTo).toISOString());
      const shown = issued.envelope.data.domain as { id: string; certificate: { state: string } };
      assert.equal(shown.id, domain.id);
      assert.equal(shown.certificate.state, 'issued');
    });

    it('sends certificate.failed with the reason when the CA cannot validate the host', async () => {
      // 127.0.0.2 is loopback, but the server listens on 127.0.0.1 only: Pebble's HTTP-01 fetch is refused.
      const domain = await addDomain(world.server, token, freshHost('fail'));
      await world.dns.addTxt(domain.txtRecord.name, domain.txtRecord.value);
      await world.dns.addA(domain.host, ['127.0.0.2']);
      assert.equal((await verifyDomain(world.server, token, domain.id)).body.state, 'verified');
      assert.equal((await handshake(world.server, domain.host, world.root)).ok, false);
      const failed = await receiver.next((r) => r.type === 'certificate.failed' && r.envelope.data.host === domain.host);
      assert.equal(failed.verified, true);
      assert.ok(typeof failed.envelope.data.reason === 'string' && failed.envelope.data.reason.length > 0);
      const shown = failed.envelope.data.domain as { certificate: { state: string; error: string } };
      assert.equal(shown.certificate.state, 'failed');
      assert.equal(shown.certificate.error, failed.envelope.data.reason);
    });
  });
}
