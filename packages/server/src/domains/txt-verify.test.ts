import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startChallTestSrv, startDnsmasq, startSilentDnsServer, type ChallTestSrv } from '@svcrouter/testkit/dns';
import { requireTools } from '@svcrouter/testkit/tools';
import { createDnsResolver } from './dns-resolver.js';
import { PROPAGATION_NOTE } from './txt-messages.js';
import { newTxtValue, txtRecordName } from './txt-record.js';
import { verifyTxt, type TxtCheck } from './txt-verify.js';

// TXT verification against real DNS servers on loopback: pebble-challtestsrv
// for records changed at run time, dnsmasq for a value split into chunks.

const TIMEOUT_MS = 3000;

/** A fresh host per test, so records set by one test never reach another. */
const freshHost = (): string => `h${randomBytes(4).toString('hex')}.example.test`;

function assertFailure(result: TxtCheck, code: string): string {
  assert.ok(!result.ok, 'verification should fail');
  assert.equal(result.code, code, result.message);
  assert.ok(result.message.endsWith(PROPAGATION_NOTE), result.message);
  assert.match(result.message, /a minute to a few hours/);
  assert.match(result.message, /do not re-add the domain/);
  return result.message;
}

if (requireTools('TXT verification against pebble-challtestsrv', ['pebble-challtestsrv'], 'pebble')) {
  describe('verifyTxt with pebble-challtestsrv', () => {
    let dns!: ChallTestSrv;
    before(async () => {
      dns = await startChallTestSrv();
    });
    after(async () => {
      await dns.close();
    });
    const verify = (host: string, expected: string) =>
      verifyTxt({ host, expected, resolver: createDnsResolver([dns.dnsServer]), timeoutMs: TIMEOUT_MS });

    it('accepts the exact value', async () => {
      const host = freshHost();
      const value = newTxtValue();
      await dns.addTxt(txtRecordName(host), value);
      assert.deepEqual(await verify(host, value), { ok: true });
    });

    it('accepts the value wrapped in one pair of double quotes', async () => {
      const host = freshHost();
      const value = newTxtValue();
      await dns.addTxt(txtRecordName(host), `"${value}"`);
      assert.deepEqual(await verify(host, value), { ok: true });
    });

    it('refuses a value wrapped in two pairs of quotes', async () => {
      const host = freshHost();
      const value = newTxtValue();
      await dns.addTxt(txtRecordName(host), `""${value}""`);
      assertFailure(await verify(host, value), 'txt_wrong_value');
    });

    it('accepts the value among several TXT records at the name', async () => {
      const host = freshHost();
      const value = newTxtValue();
      await dns.addTxt(txtRecordName(host), 'v=spf1 -all');
      await dns.addTxt(txtRecordName(host), value);
      await dns.addTxt(txtRecordName(host), 'google-site-verification=abc');
      assert.deepEqual(await verify(host, value), { ok: true });
    });

    it('reports extra whitespace around the value', async () => {
      const host = freshHost();
      const value = newTxtValue();
      await dns.addTxt(txtRecordName(host), ` ${value}  `);
      assert.match(assertFailure(await verify(host, value), 'txt_whitespace'), /extra whitespace/);
    });

    it('reports a cut-off value, showing what was found', async () => {
      const host = freshHost();
      const value = newTxtValue();
      await dns.addTxt(txtRecordName(host), value.slice(0, 30));
      const message = assertFailure(await verify(host, value), 'txt_truncated');
      assert.ok(message.includes(JSON.stringify(value.slice(0, 30))), message);
    });

    it('reports a record at _svcrouter.<host>.<host> as a doubled zone suffix', async () => {
      const host = freshHost();
      const value = newTxtValue();
      await dns.addTxt(`${txtRecordName(host)}.${host}`, value);
      const message = assertFailure(await verify(host, value), 'txt_doubled_suffix');
      assert.ok(message.includes(`${txtRecordName(host)}.${host}`), message);
      assert.ok(message.includes(`without ".${host}"`), message);
    });

    it('for a subdomain, names the parent zone the provider appended', async () => {
      const zone = freshHost();
      const host = `app.${zone}`;
      const value = newTxtValue();
      await dns.addTxt(`${txtRecordName(host)}.${zone}`, value);
      assert.ok(assertFailure(await verify(host, value), 'txt_doubled_suffix').includes(`without ".${zone}"`));
    });

    it('reports no record when nothing is published', async () => {
      const host = freshHost();
      const value = newTxtValue();
      const message = assertFailure(await verify(host, value), 'txt_not_found');
      assert.ok(message.includes(txtRecordName(host)) && message.includes(value), message);
    });

    it('reports a different value, showing what was found', async () => {
      const host = freshHost();
      await dns.addTxt(txtRecordName(host), 'svc-verify-from-an-earlier-attempt');
      const message = assertFailure(await verify(host, newTxtValue()), 'txt_wrong_value');
      assert.ok(message.includes('"svc-verify-from-an-earlier-attempt"'), message);
    });

    it('passes once a missing record is published: nothing negative is remembered', async () => {
      const host = freshHost();
      const value = newTxtValue();
      assertFailure(await verify(host, value), 'txt_not_found');
      await dns.addTxt(txtRecordName(host), value);
      assert.deepEqual(await verify(host, value), { ok: true });
    });
  });
}

if (requireTools('chunked TXT verification against dnsmasq', ['dnsmasq'], 'dnsmasq')) {
  describe('verifyTxt with dnsmasq', () => {
    it('joins a value published as 255- and 45-byte chunks', async () => {
      const host = freshHost();
      const value = `svc-verify-${'x'.repeat(289)}`;
      const server = await startDnsmasq([{ name: txtRecordName(host), strings: [value.slice(0, 255), value.slice(255)] }]);
      try {
        const resolver = createDnsResolver([server.dnsServer]);
        // The premise of the test: the record really arrives in two chunks.
        assert.deepEqual(
          (await resolver.resolveTxt(txtRecordName(host))).map((r) => r.length),
          [2],
        );
        assert.deepEqual(await verifyTxt({ host, expected: value, resolver, timeoutMs: TIMEOUT_MS }), { ok: true });
      } finally {
        await server.close();
      }
    });
  });
}

describe('verifyTxt against a server that never answers', () => {
  it('reports a DNS timeout within the deadline', async () => {
    const silent = await startSilentDnsServer();
    try {
      const resolver = createDnsResolver([silent.dnsServer], 100);
      const started = Date.now();
      const result = await verifyTxt({ host: freshHost(), expected: newTxtValue(), resolver, timeoutMs: 300 });
      assert.match(assertFailure(result, 'dns_timeout'), /timed out/);
      // Generous bound: proves the deadline holds, not how fast the machine is.
      assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms`);
    } finally {
      await silent.close();
    }
  });
});
