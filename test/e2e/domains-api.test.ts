import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { domainLimitMessage } from '@svcrouter/server/api';
import { requireTools } from '@svcrouter/testkit/tools';
import { apiClient, openApi } from './harness/api-helpers.js';
import { addDomain, freshHost, startDomainWorld, verifyDomain, type DomainView, type DomainWorld } from './harness/domains-support.js';

// The /v1/domains API of a real server, every answer checked against its OpenAPI document:
// adding (validation, plan limits, conflicts), listing, deleting and re-adding.

if (requireTools('custom-domain API', ['pebble-challtestsrv'], 'pebble')) {
  describe('REST API: domains', () => {
    let world: DomainWorld;
    let call: ReturnType<typeof apiClient>;
    let free: string;
    let pro: string;

    before(async () => {
      world = await startDomainWorld({ acme: false, env: { SVC_PLANS: '{"pro":{"domains":3}}' } });
      call = apiClient(world.server, await openApi(world.server));
      free = world.server.token!;
      pro = await world.server.createAccount(`pro-${randomBytes(3).toString('hex')}@example.com`, 'pro');
    });
    after(async () => {
      await world?.close();
    });

    /** A fresh pro account: its plan is overridden to 3 domains here, so tests do not share one. */
    const newPro = (label: string) => world.server.createAccount(`${label}-${randomBytes(3).toString('hex')}@example.com`, 'pro');
    const add = (token: string, host: string) => call('POST', '/v1/domains', { token }, { host });
    const errorOf = (body: unknown) => body as { error: string; message: string };

    it('POST answers 201 with the TXT record to publish, the edge target and the certificate state', async () => {
      const res = await add(pro, 'Shop.Bücher.Example.Test');
      assert.equal(res.status, 201);
      const domain = res.body as DomainView & { verified: boolean; verifiedAt: null };
      assert.match(domain.id, /^dom_/);
      assert.equal(domain.host, 'shop.xn--bcher-kva.example.test');
      assert.equal(domain.state, 'pending');
      assert.equal(domain.verified, false);
      assert.deepEqual(domain.txtRecord, {
        type: 'TXT',
        name: '_svcrouter.shop.xn--bcher-kva.example.test',
        value: domain.txtRecord.value,
      });
      assert.match(domain.txtRecord.value, /^svc-verify-[0-9a-f]{32,}$/);
      assert.deepEqual(domain.target, { cname: null, a: ['127.0.0.1'] });
      assert.deepEqual(domain.certificate, { state: 'none', error: null, expiresAt: null });
      assert.equal((await call('DELETE', `/v1/domains/${domain.id}`, { token: pro })).status, 204);
    });

    it('POST refuses IP literals, shared-domain names and malformed hosts with 400 naming the problem', async () => {
      for (const [host, code, pattern] of [
        ['203.0.113.7', 'host_ip', /IP addresses cannot be added/],
        ['[::1]', 'host_ip', /IP addresses/],
        ['app.localhost', 'host_shared_domain', /part of the shared domain localhost/],
        ['bad_name.example.com', 'host_invalid', /not a valid host name/],
        ['https://app.example.com', 'host_invalid', /without a scheme/],
        ['com', 'host_single_label', /single label/],
      ] as const) {
        const res = await add(pro, host);
        assert.equal(res.status, 400, host);
        assert.equal(errorOf(res.body).error, code, host);
        assert.match(errorOf(res.body).message, pattern, host);
      }
      const missing = await call('POST', '/v1/domains', { token: pro }, {});
      assert.equal(missing.status, 400);
    });

    it('the free plan allows 2 domains: the third is refused with 403 stating the limit; /v1/usage counts them', async () => {
      const added = [await addDomain(world.server, free, freshHost()), await addDomain(world.server, free, freshHost())];
      const third = await add(free, freshHost());
      assert.equal(third.status, 403);
      assert.deepEqual(third.body, { error: 'domain_limit', message: domainLimitMessage('free', 2, 2) });
      assert.match(errorOf(third.body).message, /the free plan allows 2 custom domains/);
      const usage = (await call('GET', '/v1/usage', { token: free })).body as { used: { domains: number }; limits: { domains: number } };
      assert.deepEqual([usage.used.domains, usage.limits.domains], [2, 2]);
      // Deleting one frees a slot.
      assert.equal((await call('DELETE', `/v1/domains/${added[0]!.id}`, { token: free })).status, 204);
      assert.equal((await add(free, freshHost())).status, 201);
    });

    it('SVC_PLANS sets the limit: a pro plan overridden to 3 domains refuses the fourth', async () => {
      const token = await world.server.createAccount(`limit-${randomBytes(3).toString('hex')}@example.com`, 'pro');
      for (let i = 0; i < 3; i++) assert.equal((await add(token, freshHost())).status, 201);
      const fourth = await add(token, freshHost());
      assert.equal(fourth.status, 403);
      assert.match(errorOf(fourth.body).message, /the pro plan allows 3 custom domains/);
    });

    it('a host verified by account A: B gets 409 domain_taken on add (also for names under it)', async () => {
      const host = freshHost();
      const domain = await addDomain(world.server, pro, host);
      await world.dns.addTxt(domain.txtRecord.name, domain.txtRecord.value);
      assert.equal((await verifyDomain(world.server, pro, domain.id)).body.state, 'verified');
      const other = await world.server.createAccount(`b-${randomBytes(3).toString('hex')}@example.com`, 'pro');
      for (const claim of [host, `deep.${host}`]) {
        const res = await add(other, claim);
        assert.equal(res.status, 409, claim);
        assert.equal(errorOf(res.body).error, 'domain_taken');
        assert.match(errorOf(res.body).message, /already verified by another account/);
      }
      assert.equal((await add(pro, host)).status, 409);
      assert.equal(errorOf((await add(pro, host)).body).error, 'domain_exists');
    });

    it('B added the host while A had it pending: once A verifies, B gets 409 domain_taken on verify', async () => {
      const host = freshHost();
      const other = await newPro('c');
      const pro = await newPro('a');
      const a = await addDomain(world.server, pro, host);
      const b = await addDomain(world.server, other, host);
      assert.notEqual(a.txtRecord.value, b.txtRecord.value);
      await world.dns.addTxt(a.txtRecord.name, a.txtRecord.value);
      await world.dns.addTxt(b.txtRecord.name, b.txtRecord.value);
      assert.equal((await verifyDomain(world.server, pro, a.id)).body.state, 'verified');
      const res = await call('POST', `/v1/domains/${b.id}/verify`, { token: other });
      assert.equal(res.status, 409);
      assert.equal(errorOf(res.body).error, 'domain_taken');
    });

    it("GET lists the domains with state and pending TXT records; another account's id answers 404", async () => {
      const pro = await newPro('list');
      const domain = await addDomain(world.server, pro, freshHost('listed'));
      const list = (await call('GET', '/v1/domains', { token: pro })).body as { domains: DomainView[] };
      const listed = list.domains.find((d) => d.id === domain.id);
      assert.deepEqual(listed, domain);
      assert.equal((await call('GET', `/v1/domains/${domain.id}`, { token: pro })).status, 200);
      for (const [method, suffix] of [
        ['GET', ''],
        ['DELETE', ''],
        ['POST', '/verify'],
      ] as const) {
        const res = await call(method, `/v1/domains/${domain.id}${suffix}`, { token: free });
        assert.equal(res.status, 404, `${method} ${suffix}`);
      }
      assert.ok(!(await call('GET', '/v1/domains', { token: free })).text.includes(domain.id));
    });

    it('DELETE answers 204; adding the host again gives a fresh TXT value', async () => {
      const pro = await newPro('delete');
      const host = freshHost('again');
      const first = await addDomain(world.server, pro, host);
      assert.equal((await call('DELETE', `/v1/domains/${first.id}`, { token: pro })).status, 204);
      assert.equal((await call('GET', `/v1/domains/${first.id}`, { token: pro })).status, 404);
      assert.equal((await call('DELETE', `/v1/domains/${first.id}`, { token: pro })).status, 404);
      const second = await addDomain(world.server, pro, host);
      assert.notEqual(second.txtRecord.value, first.txtRecord.value);
      // The old value no longer verifies the host.
      await world.dns.addTxt(first.txtRecord.name, first.txtRecord.value);
      const check = await verifyDomain(world.server, pro, second.id);
      assert.equal(check.body.state, 'pending');
      assert.equal(check.body.verification.code, 'txt_wrong_value');
    });

    it('the OpenAPI document lists the domain routes and their error statuses', async () => {
      const doc = (await call('GET', '/v1/openapi.json', 'none')).body as { paths: Record<string, Record<string, { responses: object }>> };
      assert.deepEqual(Object.keys(doc.paths['/v1/domains'] ?? {}).sort(), ['get', 'post']);
      assert.deepEqual(Object.keys(doc.paths['/v1/domains/{id}'] ?? {}).sort(), ['delete', 'get']);
      assert.ok(doc.paths['/v1/domains/{id}/verify']?.post);
      assert.deepEqual(Object.keys(doc.paths['/v1/domains']!.post!.responses).sort(), [
        '201',
        '400',
        '401',
        '403',
        '409',
        '413',
        '415',
        'default',
      ]);
    });
  });
}
