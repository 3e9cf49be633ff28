import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatIpv6, parseProxyHeader } from './proxy-protocol.js';

const SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

function v2(command: number, family: number, addresses: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head[0] = 0x20 | command;
  head[1] = family;
  head.writeUInt16BE(addresses.length, 2);
  return Buffer.concat([SIGNATURE, head, addresses]);
}

test('v1: TCP4 and TCP6 lines give the source address and their length; UNKNOWN keeps the socket address', () => {
  const line = 'PROXY TCP4 203.0.113.7 10.0.0.1 51234 443\r\n';
  assert.deepEqual(parseProxyHeader(Buffer.from(`${line}GET / HTTP/1.1\r\n`)), {
    kind: 'header',
    length: line.length,
    address: '203.0.113.7',
  });
  assert.deepEqual(parseProxyHeader(Buffer.from('PROXY TCP6 2001:db8::7 2001:db8::1 1 2\r\n')), {
    kind: 'header',
    length: 40,
    address: '2001:db8::7',
  });
  assert.deepEqual(parseProxyHeader(Buffer.from('PROXY UNKNOWN\r\n')), { kind: 'header', length: 15, address: undefined });
});

test('v1: a line cut anywhere asks for more, byte by byte', () => {
  const line = Buffer.from('PROXY TCP4 203.0.113.7 10.0.0.1 51234 443\r\n');
  for (let n = 1; n < line.length; n++) assert.equal(parseProxyHeader(line.subarray(0, n)).kind, 'more', String(n));
});

test('v1: malformed lines are invalid', () => {
  for (const bad of [
    'PROXY TCP4 203.0.113.7 10.0.0.1 51234\r\n',
    'PROXY TCP4 2001:db8::1 10.0.0.1 1 2\r\n',
    'PROXY TCP5 1.2.3.4 1.2.3.4 1 2\r\n',
    'PROXY TCP4 1.2.3.4 1.2.3.4 1 99999\r\n',
    'PROXY TCP4 1.2.3.4 1.2.3.4 01 2\r\n',
    `PROXY ${'x'.repeat(120)}`,
  ]) {
    assert.equal(parseProxyHeader(Buffer.from(bad)).kind, 'invalid', bad);
  }
});

test('bytes that are not a PROXY header are the connection own: HTTP, POST, a TLS ClientHello', () => {
  assert.equal(parseProxyHeader(Buffer.from('GET / HTTP/1.1\r\n')).kind, 'none');
  assert.equal(parseProxyHeader(Buffer.from('POST / HTTP/1.1\r\n')).kind, 'none');
  assert.equal(parseProxyHeader(Buffer.from('P')).kind, 'more');
  assert.equal(parseProxyHeader(Buffer.from([0x16, 0x03, 0x01])).kind, 'none');
});

test('v2: IPv4 and IPv6 PROXY commands give the source; LOCAL keeps the socket address; TLVs are skipped', () => {
  const ipv4 = Buffer.from([203, 0, 113, 7, 10, 0, 0, 1, 0xc8, 0x22, 0x01, 0xbb, 0x04, 0x00, 0x01, 0x00]);
  assert.deepEqual(parseProxyHeader(v2(1, 0x11, ipv4)), { kind: 'header', length: 32, address: '203.0.113.7' });
  const ipv6 = Buffer.alloc(36);
  Buffer.from('20010db8000000000000000000000007', 'hex').copy(ipv6, 0);
  assert.deepEqual(parseProxyHeader(v2(1, 0x21, ipv6)), { kind: 'header', length: 52, address: '2001:db8::7' });
  assert.deepEqual(parseProxyHeader(v2(0, 0x00, Buffer.alloc(0))), { kind: 'header', length: 16, address: undefined });
  const whole = v2(1, 0x11, ipv4);
  for (let n = 1; n < whole.length; n++) assert.equal(parseProxyHeader(whole.subarray(0, n)).kind, 'more', String(n));
});

test('v2: a wrong version, command or short address block is invalid', () => {
  const bad = v2(1, 0x11, Buffer.alloc(4));
  assert.equal(parseProxyHeader(bad).kind, 'invalid');
  const version = v2(1, 0x11, Buffer.alloc(12));
  version[12] = 0x31;
  assert.equal(parseProxyHeader(version).kind, 'invalid');
  assert.equal(parseProxyHeader(v2(2, 0x11, Buffer.alloc(12))).kind, 'invalid');
});

test('IPv6 addresses are written short, IPv4-mapped ones as IPv4', () => {
  assert.equal(formatIpv6(Buffer.from('00000000000000000000000000000001', 'hex')), '::1');
  assert.equal(formatIpv6(Buffer.from('20010db8000100000000000000000000', 'hex')), '2001:db8:1::');
  assert.equal(formatIpv6(Buffer.from('20010db8000000010000000000000001', 'hex')), '2001:db8:0:1::1');
  assert.equal(formatIpv6(Buffer.from('00000000000000000000ffffcb007107', 'hex')), '203.0.113.7');
});
