import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeCustomHost, type HostErrorCode } from './host.js';

const SHARED = 'tunnels.example.net';

function accepted(input: string): string {
  const result = normalizeCustomHost(input, SHARED);
  assert.ok(result.ok, `${input}: ${result.ok ? '' : result.message}`);
  return result.host;
}

function refused(input: string): HostErrorCode {
  const result = normalizeCustomHost(input, SHARED);
  assert.ok(!result.ok, `${input} should be refused, got ${result.ok ? result.host : ''}`);
  assert.ok(result.message.length > 10);
  return result.code;
}

test('a plain host is lower-cased, trimmed and loses one trailing dot', () => {
  assert.equal(accepted('  App.Example.COM. '), 'app.example.com');
  assert.equal(accepted('example.com'), 'example.com');
});

test('an IDN becomes punycode and punycode input is kept', () => {
  assert.equal(accepted('Bücher.Example'), 'xn--bcher-kva.example');
  assert.equal(accepted('xn--bcher-kva.example'), 'xn--bcher-kva.example');
  assert.equal(accepted('💩.la'), 'xn--ls8h.la');
});

test('punycode labels that do not decode are refused', () => {
  assert.equal(refused('xn--abc.example'), 'host_invalid');
  assert.equal(refused('xn--zz.example'), 'host_invalid');
});

test('IP literals and names that parse as IPv4 are refused', () => {
  for (const ip of ['127.0.0.1', '::1', '[::1]', '0x7f.1', '1.2.3', '10.0.0.1.']) assert.equal(refused(ip), 'host_ip', ip);
});

test('single-label names are refused', () => {
  assert.equal(refused('localhost'), 'host_single_label');
  assert.equal(refused('intranet.'), 'host_single_label');
});

test('names at, under or above the shared domain are refused', () => {
  for (const h of ['tunnels.example.net', 'a.tunnels.example.net', 'A.B.Tunnels.Example.Net', 'example.net']) {
    assert.equal(refused(h), 'host_shared_domain', h);
  }
  assert.equal(accepted('other.example.net'), 'other.example.net');
});

test('invalid labels are refused', () => {
  for (const h of [
    'a..example.com',
    '-a.example.com',
    'a-.example.com',
    'ex_ample.com',
    '*.example.com',
    'a b.com',
    'ab--cd.example.com',
    `${'a'.repeat(64)}.com`,
  ]) {
    assert.equal(refused(h), 'host_invalid', h);
  }
});

test('a scheme, port or path is refused with a hint', () => {
  for (const h of ['https://example.com', 'example.com:443', 'example.com/path', 'user@example.com']) {
    const result = normalizeCustomHost(h, SHARED);
    assert.ok(!result.ok && result.code === 'host_invalid' && /without a scheme/.test(result.message), h);
  }
});

test('names longer than 253 characters are refused, 253 is accepted', () => {
  const label = 'a'.repeat(63);
  const exact = `${label}.${label}.${label}.${'b'.repeat(61)}`;
  assert.equal(exact.length, 253);
  assert.equal(accepted(exact), exact);
  assert.equal(refused(`${exact}c`), 'host_too_long');
  assert.equal(refused('x'.repeat(5000)), 'host_too_long');
});

test('an empty host is refused', () => {
  assert.equal(refused('   '), 'host_empty');
});
