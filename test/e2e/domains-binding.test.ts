import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Messages } from '@svcrouter/protocol';
import { domainNotAddedMessage, domainPendingMessage } from '@svcrouter/server/domains';
import { openStore } from '@svcrouter/server/store';
import { requireTools } from '@svcrouter/testkit/tools';
import { api, spawnAgent, splitFailure, startAgent, startOrigin, visit, type TestOrigin } from './harness/index.js';
import { eventually } from './harness/api-helpers.js';
import {
  ACME_PACKAGES,
  ACME_TOOLS,
  addDomain,
  addVerified,
  freshHost,
  handshake,
  startDomainWorld,
  type DomainWorld,
} from './harness/domains-support.js';

// Binding tunnels to custom domains with SVC_DOMAIN (+ SVC_SUBDOMAIN), served over HTTP
// and over HTTPS with a certificate Pebble issues on the first request.

if (requireTools('custom-domain binding (Pebble)', ACME_TOOLS, ACME_PACKAGES)) {
  describe('binding tunnels to custom domains', () => {
    let world: DomainWorld;
    let origin: TestOrigin;
    let token: string;

    before(async () => {
      world = await startDomainWorld({ acme: true });
      origin = await startOrigin();
      token = await world.server.createAccount(`bind-${randomBytes(3).toString('hex')}@example.com`, 'pro');
    });
    after(async () => {
      await origin?.close();
      await world?.close();
    });

    const echo = (text: string) => JSON.parse(text) as { url: string; headers: Record<string, string> };
    const pebbleTrust = () => ({ ...world.server, caPem: world.root });

    it('SVC_DOMAIN binds at https://<host>, served over HTTP and HTTPS', async () => {
      const domain = await addVerified(world, token);
      const agent = await startAgent(world.server, { token, target: origin.port, domain: domain.host.toUpperCase() });
      try {
        assert.equal(agent.url, `https://${domain.host}:${world.server.httpsPort}`);
        const plain = await visit(world.server, domain.host, '/echo?over=http');
        assert.equal(plain.status, 200);
        assert.equal(echo(plain.text).headers['x-forwarded-proto'], 'http');
        const secure = await visit(pebbleTrust(), domain.host, '/echo?over=https', { secure: true });
        assert.equal(secure.status, 200);
        assert.equal(echo(secure.text).headers['x-forwarded-proto'], 'https');
        assert.equal(echo(secure.text).headers['x-forwarded-host'], `${domain.host}:${world.server.httpsPort}`);
        // The requests are the owner's in the Traffic Inspector.
        await eventually(
          () => api(world.server, 'GET', `/v1/requests?host=${domain.host}`, { token }),
          (r) => (r.body as { requests: unknown[] }).requests.length >= 2,
          'custom-host requests captured',
        );
      } finally {
        await agent.close();
      }
    });

    it('SVC_DOMAIN + SVC_SUBDOMAIN binds at https://<sub>.<host>, with its own certificate', async () => {
      const domain = await addVerified(world, token);
      const hostname = `api.${domain.host}`;
      await world.dns.addA(hostname, ['127.0.0.1']);
      const agent = await startAgent(world.server, { token, target: origin.port, domain: domain.host, subdomain: 'api' });
      try {
        assert.equal(agent.hostname, hostname);
        assert.equal((await visit(world.server, hostname, '/echo')).status, 200);
        const secure = await visit(pebbleTrust(), hostname, '/echo', { secure: true });
        assert.equal(secure.status, 200);
        assert.equal(echo(secure.text).url, '/echo');
        const shake = await handshake(world.server, hostname, world.root);
        assert.ok(shake.ok && shake.authorized && shake.leaf.checkHost(hostname) === hostname);
      } finally {
        await agent.close();
      }
    });

    it('an unverified SVC_DOMAIN: the agent names the domain, its state and how to verify, exits 1, binds nothing', async () => {
      const pending = await addDomain(world.server, token, freshHost('pending'));
      const unknown = freshHost('unknown');
      for (const [domain, expected] of [
        [pending.host, domainPendingMessage({ ...pending, txtValue: pending.txtRecord.value })],
        [unknown, domainNotAddedMessage(unknown)],
      ] as const) {
        const proc = spawnAgent(world.server, { token, target: origin.port, domain });
        const { code } = await proc.exited;
        assert.equal(code, 1, proc.output);
        assert.equal(splitFailure(proc.stderrLines.join('\n')).sentence, expected);
        assert.ok(!proc.lines.some((line) => line.startsWith('Forwarding')));
      }
      assert.match(
        domainPendingMessage({ ...pending, txtValue: pending.txtRecord.value }),
        /state: pending.*_svcrouter\..*POST \/v1\/domains\/dom_\w+\/verify/,
      );
      const tunnels = (await api(world.server, 'GET', '/v1/tunnels', { token })).body as {
        tunnels: Array<{ host: string; status: string }>;
      };
      assert.ok(!tunnels.tunnels.some((t) => t.host.includes('pending.') || t.host.includes('unknown.')));
      // Another account's token gets the same refusal for a domain it does not hold.
      const other = await world.server.createAccount(`other-${randomBytes(3).toString('hex')}@example.com`);
      const proc = spawnAgent(world.server, { token: other, target: origin.port, domain: pending.host });
      assert.equal((await proc.exited).code, 1);
      assert.equal(splitFailure(proc.stderrLines.join('\n')).sentence, domainNotAddedMessage(pending.host));
    });

    it('a verified host with no tunnel shows the offline page over HTTP and HTTPS, captured for its owner', async () => {
      const domain = await addVerified(world, token);
      const plain = await visit(world.server, domain.host, '/nobody-home');
      assert.equal(plain.status, 404);
      assert.match(plain.text, new RegExp(Messages.TUNNEL_OFFLINE));
      const secure = await visit(pebbleTrust(), domain.host, '/nobody-home', { secure: true });
      assert.match(secure.text, new RegExp(Messages.TUNNEL_OFFLINE));
      const captured = await eventually(
        () => api(world.server, 'GET', `/v1/requests?host=${domain.host}`, { token }),
        (r) => (r.body as { requests: unknown[] }).requests.length === 2,
        'offline requests captured for the owner',
      );
      assert.ok(
        (captured.body as { requests: Array<{ path: string; status: number }> }).requests.every(
          (r) => r.path === '/nobody-home' && r.status === 404,
        ),
      );
    });

    it('DELETE /v1/domains/:id closes its tunnels (the agent says why and exits) and forgets the certificates', async () => {
      const domain = await addVerified(world, token);
      const sub = `www.${domain.host}`;
      await world.dns.addA(sub, ['127.0.0.1']);
      const apex = await startAgent(world.server, { token, target: origin.port, domain: domain.host });
      const www = await startAgent(world.server, { token, target: origin.port, domain: domain.host, subdomain: 'www' });
      assert.equal((await visit(pebbleTrust(), sub, '/echo', { secure: true })).status, 200);
      assert.equal((await visit(pebbleTrust(), domain.host, '/echo', { secure: true })).status, 200);

      assert.equal((await api(world.server, 'DELETE', `/v1/domains/${domain.id}`, { token })).status, 204);
      for (const agent of [apex, www]) {
        const { code } = await agent.proc.exited;
        assert.equal(code, 0);
        assert.ok(
          agent.proc.stderrLines.some((l) => l.includes(`custom domain ${domain.host} was removed from the account`)),
          agent.proc.output,
        );
      }
      assert.match((await visit(world.server, domain.host, '/')).text, new RegExp(Messages.TUNNEL_OFFLINE));
      for (const name of [domain.host, sub]) assert.equal((await handshake(world.server, name, world.root)).ok, false, name);
      const store = await openStore({ dataDir: world.server.dataDir });
      try {
        assert.equal(await store.certificates.get(domain.host), undefined);
        assert.equal(await store.certificates.get(sub), undefined);
      } finally {
        await store.close();
      }
      // Adding it back starts over: a new value to publish, pending.
      const again = await addDomain(world.server, token, domain.host);
      assert.notEqual(again.txtRecord.value, domain.txtRecord.value);
      assert.equal(again.state, 'pending');
    });

    it('after the edge restarts, the agent reconnects and takes its custom hostname back (last: restarts the server)', async () => {
      const domain = await addVerified(world, token);
      const agent = await startAgent(world.server, { token, target: origin.port, domain: domain.host, subdomain: 'back' });
      try {
        await world.restart();
        const line = await agent.proc.waitForLine(/^Reconnected: forwarding https:\/\/(\S+?):\d+ -> /);
        assert.equal(line[1], `back.${domain.host}`);
        assert.equal((await visit(world.server, `back.${domain.host}`, '/echo')).status, 200);
      } finally {
        await agent.close();
      }
    });
  });
}
