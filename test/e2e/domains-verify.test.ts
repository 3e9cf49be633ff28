import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { PROPAGATION_NOTE, txtFailureMessage, type TxtFailureCode } from '@svcrouter/server/domains';
import { startDnsmasq } from '@svcrouter/testkit/dns';
import { requireTools } from '@svcrouter/testkit/tools';
import { startServer } from './harness/index.js';
import { addDomain, freshHost, startDomainWorld, verifyDomain, type DomainView, type DomainWorld } from './harness/domains-support.js';

// POST /v1/domains/:id/verify of a real server against real DNS servers on loopback:
// each way a TXT record goes wrong gets its stable code and exact sentence.

type Routing = {
  pointsAtEdge: boolean;
  found: { cname: string[]; a: string[] };
  expected: { cname: string | null; a: string[] };
  message: string;
};
type Check = DomainView & { verification: { ok: boolean; code: TxtFailureCode | null; message: string }; routing: Routing | null };

if (requireTools('custom-domain verification', ['pebble-challtestsrv'], 'pebble')) {
  describe('domain verification through real DNS', () => {
    let world: DomainWorld;
    let token: string;

    before(async () => {
      world = await startDomainWorld({ acme: false });
      token = await world.server.createAccount(`verify-${randomBytes(3).toString('hex')}@example.com`, 'pro');
    });
    after(async () => {
      await world?.close();
    });

    /** Adds a fresh host, lets `publish` set its records, and verifies once. */
    async function attempt(publish: (d: DomainView) => Promise<void>, host = freshHost()): Promise<{ domain: DomainView; check: Check }> {
      const domain = await addDomain(world.server, token, host);
      await publish(domain);
      const result = await verifyDomain(world.server, token, domain.id);
      assert.equal(result.status, 200, result.text);
      return { domain, check: result.body as Check };
    }
    function assertFailed(check: Check, code: TxtFailureCode, message: string): void {
      assert.equal(check.state, 'pending');
      assert.deepEqual(check.verification, { ok: false, code, message });
      assert.ok(message.endsWith(PROPAGATION_NOTE));
    }

    it('accepts the value wrapped in quotes, as DNS UIs add them', async () => {
      const { check } = await attempt((d) => world.dns.addTxt(d.txtRecord.name, `"${d.txtRecord.value}"`));
      assert.equal(check.state, 'verified');
      assert.deepEqual(check.verification.ok, true);
    });

    it('accepts the value among several TXT records at the name', async () => {
      const { check } = await attempt(async (d) => {
        await world.dns.addTxt(d.txtRecord.name, 'v=spf1 -all');
        await world.dns.addTxt(d.txtRecord.name, d.txtRecord.value);
        await world.dns.addTxt(d.txtRecord.name, 'google-site-verification=abc');
      });
      assert.equal(check.state, 'verified');
    });

    it('no record: txt_not_found, naming the record to create', async () => {
      const { domain, check } = await attempt(async () => undefined);
      assertFailed(
        check,
        'txt_not_found',
        txtFailureMessage('txt_not_found', { name: domain.txtRecord.name, expected: domain.txtRecord.value }),
      );
    });

    it('extra whitespace around the value: txt_whitespace', async () => {
      const { domain, check } = await attempt((d) => world.dns.addTxt(d.txtRecord.name, `  ${d.txtRecord.value} `));
      assertFailed(
        check,
        'txt_whitespace',
        txtFailureMessage('txt_whitespace', { name: domain.txtRecord.name, expected: domain.txtRecord.value }),
      );
    });

    it('a cut-off value: txt_truncated, showing what was found', async () => {
      const { domain, check } = await attempt((d) => world.dns.addTxt(d.txtRecord.name, d.txtRecord.value.slice(0, 25)));
      const found = [domain.txtRecord.value.slice(0, 25)];
      assertFailed(
        check,
        'txt_truncated',
        txtFailureMessage('txt_truncated', { name: domain.txtRecord.name, expected: domain.txtRecord.value, found }),
      );
    });

    it('the zone appended twice (_svcrouter.<host>.<zone>): txt_doubled_suffix, naming the zone to leave out', async () => {
      const zone = `z${randomBytes(4).toString('hex')}.example.test`;
      const { domain, check } = await attempt((d) => world.dns.addTxt(`${d.txtRecord.name}.${zone}`, d.txtRecord.value), `app.${zone}`);
      assertFailed(
        check,
        'txt_doubled_suffix',
        txtFailureMessage('txt_doubled_suffix', { name: domain.txtRecord.name, expected: domain.txtRecord.value, zone }),
      );
      assert.match(check.verification.message, new RegExp(`without "\\.${zone.replace(/\./g, '\\.')}"`));
    });

    it('another value (say, from an earlier add): txt_wrong_value', async () => {
      const { domain, check } = await attempt((d) => world.dns.addTxt(d.txtRecord.name, 'svc-verify-stale'));
      assertFailed(
        check,
        'txt_wrong_value',
        txtFailureMessage('txt_wrong_value', {
          name: domain.txtRecord.name,
          expected: domain.txtRecord.value,
          found: ['svc-verify-stale'],
        }),
      );
    });

    it('a failed check passes once the record is fixed, without re-adding', async () => {
      const { domain, check } = await attempt(async () => undefined);
      assert.equal(check.verification.code, 'txt_not_found');
      await world.dns.addTxt(domain.txtRecord.name, domain.txtRecord.value);
      assert.equal((await verifyDomain(world.server, token, domain.id)).body.state, 'verified');
    });

    it('reports the routing preflight as information: pointing elsewhere never blocks verification', async () => {
      const away = await attempt(async (d) => {
        await world.dns.addTxt(d.txtRecord.name, d.txtRecord.value);
        await world.dns.addA(d.host, ['198.51.100.9']);
      });
      assert.equal(away.check.state, 'verified');
      assert.deepEqual(
        { ...away.check.routing, message: '' },
        {
          pointsAtEdge: false,
          found: { cname: [], a: ['198.51.100.9'] },
          expected: { cname: null, a: ['127.0.0.1'] },
          message: '',
        },
      );
      assert.match(away.check.routing!.message, /does not point at the edge yet.*A records to 127\.0\.0\.1/);
      const home = await attempt((d) => world.dns.addA(d.host, ['127.0.0.1']));
      assert.equal(home.check.state, 'pending');
      assert.equal(home.check.routing?.pointsAtEdge, true);
      assert.match(home.check.routing!.message, /points at the edge \(A 127\.0\.0\.1\)/);
    });
  });
}

if (requireTools('custom-domain verification with chunked TXT records', ['pebble-challtestsrv', 'dnsmasq'], 'pebble dnsmasq')) {
  describe('domain verification of a record split into 255-byte strings', () => {
    it('joins the strings of each record (dnsmasq), among several records', async () => {
      // The value is only known once added, and dnsmasq's records are fixed at start: add
      // the domain, start dnsmasq with it, then restart the server on dnsmasq.
      const world = await startDomainWorld({ acme: false });
      const token = world.server.token!;
      const host = freshHost('chunks');
      const domain = await addDomain(world.server, token, host);
      const value = domain.txtRecord.value;
      const dnsmasq = await startDnsmasq([
        { name: domain.txtRecord.name, strings: [value.slice(0, 17), value.slice(17)] },
        { name: domain.txtRecord.name, strings: ['x'.repeat(255), 'y'.repeat(45)] },
      ]);
      try {
        await world.server.close({ keepData: true });
        world.server = await startServer({ dataDir: world.server.dataDir, env: { SVC_DNS_SERVERS: dnsmasq.dnsServer } });
        const result = await verifyDomain(world.server, token, domain.id);
        assert.equal(result.body.state, 'verified', result.text);
      } finally {
        await dnsmasq.close();
        await world.close();
      }
    });
  });
}
