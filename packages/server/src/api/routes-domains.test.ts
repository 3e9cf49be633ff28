import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { PROPAGATION_NOTE, txtRecordName } from '../domains/index.js';
import type { Domain as DomainRecord } from '../store/index.js';
import { startChallTestSrv, type ChallTestSrv } from '@svcrouter/testkit/dns';
import { requireTools } from '@svcrouter/testkit/tools';
import { domainLimitMessage } from './routes-domains.js';
import { Domain, DomainCheck, DomainList } from './schemas.js';
import { startApiFixture, type ApiFixture } from './test-support.js';

// The domain routes over a real SQLite store; verification against pebble-challtestsrv.

const fresh = (label = 'app'): string => `${label}.d${randomBytes(4).toString('hex')}.example.test`;

describe('domain routes', () => {
  let api: ApiFixture;
  const removed: DomainRecord[] = [];
  before(async () => {
    api = await startApiFixture({
      domains: { edgeTarget: { hostname: 'edge.svc.example', ips: ['203.0.113.7'] }, onDomainRemoved: async (d) => void removed.push(d) },
    });
  });
  after(() => api.close());

  const add = async (host: string, token = api.b.token) => api.call('POST', '/v1/domains', { token, body: { host } });

  it('adds a domain: 201, pending, a TXT record with ≥128 random bits, the edge target, no certificate yet', async () => {
    const res = await add('Bücher.Example.Test.');
    assert.equal(res.status, 201, res.text);
    const domain = Domain.parse(res.body);
    assert.equal(domain.host, 'xn--bcher-kva.example.test');
    assert.equal(domain.state, 'pending');
    assert.equal(domain.verified, false);
    assert.equal(domain.txtRecord.name, '_svcrouter.xn--bcher-kva.example.test');
    assert.match(domain.txtRecord.value, /^svc-verify-[0-9a-f]{40}$/);
    assert.deepEqual(domain.target, { cname: 'edge.svc.example', a: ['203.0.113.7'] });
    assert.deepEqual(domain.certificate, { state: 'none', error: null, expiresAt: null });
    assert.equal(domain.verifiedAt, null);
  });

  it('refuses bad hosts with 400 and the code of the problem', async () => {
    for (const [host, code] of [
      ['127.0.0.1', 'host_ip'],
      ['x.svc.test', 'host_shared_domain'],
      ['https://app.example.com/', 'host_invalid'],
      ['intranet', 'host_single_label'],
      ['', 'host_empty'],
    ] as const) {
      const res = await add(host);
      assert.equal(res.status, 400, host);
      assert.equal((res.body as { error: string }).error, code, host);
      assert.ok((res.body as { message: string }).message.length > 20);
    }
    assert.equal((await api.call('POST', '/v1/domains', { token: api.b.token, body: { host: 'a.example.test', extra: 1 } })).status, 400);
  });

  it('answers 409 domain_exists for a host the account already has', async () => {
    const host = fresh();
    assert.equal((await add(host)).status, 201);
    const again = await add(host.toUpperCase());
    assert.equal(again.status, 409);
    assert.equal((again.body as { error: string }).error, 'domain_exists');
  });

  it('answers 409 domain_taken for a host (or a name under a host) another account verified', async () => {
    const host = fresh();
    const created = Domain.parse((await add(host, api.a.token)).body);
    await api.store.domains.markVerified(created.id);
    for (const claim of [host, `www.${host}`]) {
      const res = await add(claim);
      assert.equal(res.status, 409, claim);
      assert.equal((res.body as { error: string }).error, 'domain_taken');
    }
    await api.call('DELETE', `/v1/domains/${created.id}`, { token: api.a.token });
  });

  it('refuses the third domain of a free account with 403 naming the limit, and counts them in /v1/usage', async () => {
    const results = await Promise.all([fresh(), fresh(), fresh(), fresh()].map((h) => add(h, api.a.token)));
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 201, 403, 403]);
    const refused = results.find((r) => r.status === 403)!;
    assert.deepEqual(refused.body, { error: 'domain_limit', message: domainLimitMessage('free', 2, 2) });
    assert.match(domainLimitMessage('free', 2, 2), /allows 2 custom domains/);
    const usage = (await api.call('GET', '/v1/usage', { token: api.a.token })).body as {
      used: { domains: number };
      limits: { domains: number };
    };
    assert.equal(usage.used.domains, 2);
    assert.equal(usage.limits.domains, 2);
  });

  it("lists the account's domains newest first, and shows one by id", async () => {
    const host = fresh('list');
    const created = Domain.parse((await add(host)).body);
    const list = DomainList.parse((await api.call('GET', '/v1/domains', { token: api.b.token })).body);
    assert.equal(list.domains[0]?.id, created.id);
    assert.ok(list.domains.every((d) => d.txtRecord.name === txtRecordName(d.host)));
    assert.deepEqual(Domain.parse((await api.call('GET', `/v1/domains/${created.id}`, { token: api.b.token })).body), created);
  });

  it("answers 404 for another account's domain on every /:id route, and leaves it alone", async () => {
    const created = Domain.parse((await add(fresh('mine'))).body);
    for (const [method, path] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/verify'],
    ] as const) {
      const res = await api.call(method, `/v1/domains/${created.id}${path}`, { token: api.a.token });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.ok(!res.text.includes(created.id));
    }
    assert.equal((await api.call('GET', `/v1/domains/${created.id}`, { token: api.b.token })).status, 200);
  });

  it('deletes: 204, the cleanup hook runs, and adding again gives a fresh TXT value', async () => {
    const host = fresh('gone');
    const first = Domain.parse((await add(host)).body);
    const res = await api.call('DELETE', `/v1/domains/${first.id}`, { token: api.b.token });
    assert.equal(res.status, 204);
    assert.equal(removed.at(-1)?.id, first.id);
    assert.equal((await api.call('GET', `/v1/domains/${first.id}`, { token: api.b.token })).status, 404);
    const second = Domain.parse((await add(host)).body);
    assert.notEqual(second.txtRecord.value, first.txtRecord.value);
    assert.notEqual(second.id, first.id);
  });
});

if (requireTools('domain verification against pebble-challtestsrv', ['pebble-challtestsrv'], 'pebble')) {
  describe('POST /v1/domains/:id/verify', () => {
    let dns!: ChallTestSrv;
    let api!: ApiFixture;
    before(async () => {
      dns = await startChallTestSrv();
      api = await startApiFixture({
        domains: { dnsServers: [dns.dnsServer], edgeTarget: { ips: ['203.0.113.7'] }, verifyTimeoutMs: 3000 },
      });
    });
    after(async () => {
      await api?.close();
      await dns?.close();
    });

    async function added(token: string, host = fresh()) {
      const res = await api.call('POST', '/v1/domains', { token, body: { host } });
      assert.equal(res.status, 201, res.text);
      return Domain.parse(res.body);
    }
    const verify = async (id: string, token = api.b.token) => api.call('POST', `/v1/domains/${id}/verify`, { token });

    it('without a record: 200, still pending, txt_not_found with the sentence, routing as information', async () => {
      const domain = await added(api.b.token);
      await dns.addA(domain.host, ['198.51.100.1']);
      const res = await verify(domain.id);
      assert.equal(res.status, 200);
      const check = DomainCheck.parse(res.body);
      assert.equal(check.state, 'pending');
      assert.equal(check.verification.ok, false);
      assert.equal(check.verification.code, 'txt_not_found');
      assert.ok(check.verification.message.endsWith(PROPAGATION_NOTE));
      assert.deepEqual(check.routing && { ...check.routing, message: '' }, {
        pointsAtEdge: false,
        found: { cname: [], a: ['198.51.100.1'] },
        expected: { cname: null, a: ['203.0.113.7'] },
        message: '',
      });
      assert.match(check.routing?.message ?? '', /A records to 203\.0\.113\.7.*Verification does not depend on this/);
    });

    it('with the record: verified, even when the host does not point at the edge yet', async () => {
      const domain = await added(api.b.token);
      await dns.addTxt(domain.txtRecord.name, domain.txtRecord.value);
      const check = DomainCheck.parse((await verify(domain.id)).body);
      assert.equal(check.state, 'verified');
      assert.deepEqual([check.verification.ok, check.verification.code], [true, null]);
      assert.equal(check.routing?.pointsAtEdge, false);
      assert.ok(check.verifiedAt);
      // Verifying again is a no-op that still answers 200.
      assert.equal(DomainCheck.parse((await verify(domain.id)).body).state, 'verified');
    });

    it('answers 409 domain_taken when another account verified the host first', async () => {
      const host = fresh();
      const first = await added(api.a.token, host);
      const second = await added(api.b.token, host);
      await dns.addTxt(first.txtRecord.name, first.txtRecord.value);
      await dns.addTxt(second.txtRecord.name, second.txtRecord.value);
      assert.equal(DomainCheck.parse((await verify(first.id, api.a.token)).body).state, 'verified');
      const res = await verify(second.id);
      assert.equal(res.status, 409);
      assert.equal((res.body as { error: string }).error, 'domain_taken');
      assert.equal(Domain.parse((await api.call('GET', `/v1/domains/${second.id}`, { token: api.b.token })).body).state, 'pending');
    });
  });
}
