import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it, test } from 'node:test';
import { startChallTestSrv, type ChallTestSrv } from '@svcrouter/testkit/dns';
import { requireTools } from '@svcrouter/testkit/tools';
import { createDnsResolver } from './dns-resolver.js';
import { parseEdgeTarget, preflight, type EdgeTarget } from './preflight.js';

const freshHost = (): string => `p${randomBytes(4).toString('hex')}.example.test`;

test('parseEdgeTarget reads one hostname and any IPv4 addresses', () => {
  assert.deepEqual(parseEdgeTarget('Edge.Example.NET.'), { hostname: 'edge.example.net' });
  assert.deepEqual(parseEdgeTarget('203.0.113.7, 203.0.113.8'), { ips: ['203.0.113.7', '203.0.113.8'] });
  assert.deepEqual(parseEdgeTarget('203.0.113.7,edge.example.net'), { hostname: 'edge.example.net', ips: ['203.0.113.7'] });
  for (const bad of ['', ' , ', 'a.example.net,b.example.net', 'edge', 'bad_name.example.net', '::1']) {
    assert.equal(parseEdgeTarget(bad), undefined, bad);
  }
});

if (requireTools('preflight against pebble-challtestsrv', ['pebble-challtestsrv'], 'pebble')) {
  describe('preflight with pebble-challtestsrv', () => {
    let dns!: ChallTestSrv;
    before(async () => {
      dns = await startChallTestSrv();
    });
    after(async () => {
      await dns.close();
    });
    const check = (host: string, target: EdgeTarget) =>
      preflight({ host, target, resolver: createDnsResolver([dns.dnsServer]), timeoutMs: 3000 });

    it('a CNAME to the edge hostname points at the edge', async () => {
      const host = freshHost();
      await dns.setCname(host, 'edge.svc.test');
      const result = await check(host, { hostname: 'edge.svc.test' });
      assert.equal(result.pointsAtEdge, true);
      assert.deepEqual(result.found.cname, ['edge.svc.test']);
      assert.deepEqual(result.expected, { hostname: 'edge.svc.test' });
    });

    it('a CNAME elsewhere does not', async () => {
      const host = freshHost();
      await dns.setCname(host, 'other.host.test');
      const result = await check(host, { hostname: 'edge.svc.test' });
      assert.equal(result.pointsAtEdge, false);
      assert.deepEqual(result.found.cname, ['other.host.test']);
    });

    it('A records that are all edge IPs point at the edge', async () => {
      const host = freshHost();
      await dns.addA(host, ['203.0.113.7']);
      const result = await check(host, { ips: ['203.0.113.7', '203.0.113.8'] });
      assert.equal(result.pointsAtEdge, true);
      assert.deepEqual(result.found, { a: ['203.0.113.7'] });
    });

    it('an A record elsewhere does not', async () => {
      const host = freshHost();
      await dns.addA(host, ['198.51.100.1']);
      assert.deepEqual(await check(host, { ips: ['203.0.113.7'] }), {
        pointsAtEdge: false,
        found: { a: ['198.51.100.1'] },
        expected: { ips: ['203.0.113.7'] },
      });
    });

    it("an apex A record matching the edge hostname's own A record points at the edge", async () => {
      const host = freshHost();
      const edge = `edge-${freshHost()}`;
      await dns.addA(edge, ['203.0.113.9']);
      await dns.addA(host, ['203.0.113.9']);
      assert.equal((await check(host, { hostname: edge })).pointsAtEdge, true);
    });

    it('a host with no records reports nothing found', async () => {
      assert.deepEqual(await check(freshHost(), { hostname: 'edge.svc.test' }), {
        pointsAtEdge: false,
        found: {},
        expected: { hostname: 'edge.svc.test' },
      });
    });
  });
}
