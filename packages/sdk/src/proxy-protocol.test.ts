import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxyProtocolHeader, splitAddress } from './proxy-protocol.js';
import { parseTcpTarget } from './tcp-proxy.js';

describe('proxyProtocolHeader', () => {
  it('writes v1 for IPv4 and IPv6 visitors, and UNKNOWN without an address', () => {
    assert.equal(
      proxyProtocolHeader('v1', '203.0.113.7:51234', 20417).toString('latin1'),
      'PROXY TCP4 203.0.113.7 0.0.0.0 51234 20417\r\n',
    );
    assert.equal(proxyProtocolHeader('v1', '2001:db8::1:443', 20417).toString('latin1'), 'PROXY TCP6 2001:db8::1 :: 443 20417\r\n');
    assert.equal(proxyProtocolHeader('v1', 'not-an-ip:1', 1).toString('latin1'), 'PROXY UNKNOWN\r\n');
  });

  it('writes v2 with the signature, family, addresses and ports in network order', () => {
    const v4 = proxyProtocolHeader('v2', '203.0.113.7:51234', 20417);
    assert.equal(v4.length, 28);
    assert.equal(v4.subarray(0, 12).toString('hex'), '0d0a0d0a000d0a515549540a');
    assert.deepEqual([v4[12], v4[13], v4.readUInt16BE(14)], [0x21, 0x11, 12]);
    assert.equal([...v4.subarray(16, 20)].join('.'), '203.0.113.7');
    assert.deepEqual([v4.readUInt16BE(24), v4.readUInt16BE(26)], [51234, 20417]);

    const v6 = proxyProtocolHeader('v2', '2001:db8::1:443', 20417);
    assert.equal(v6.length, 52);
    assert.deepEqual([v6[13], v6.readUInt16BE(14)], [0x21, 36]);
    assert.equal(v6.subarray(16, 32).toString('hex'), '20010db8000000000000000000000001');
    assert.deepEqual([v6.readUInt16BE(48), v6.readUInt16BE(50)], [443, 20417]);

    // LOCAL-less "unknown": version 2, PROXY command, AF_UNSPEC, no addresses.
    assert.equal(proxyProtocolHeader('v2', undefined, 1).subarray(12).toString('hex'), '20000000');
  });

  it('splits ip:port at the last colon and refuses what is not an IP', () => {
    assert.deepEqual(splitAddress('::1:80'), { ip: '::1', port: 80 });
    assert.equal(splitAddress('host:80'), undefined);
    assert.equal(splitAddress('1.2.3.4'), undefined);
  });
});

describe('parseTcpTarget', () => {
  it('takes a port or host:port, and says what is wrong otherwise', () => {
    assert.deepEqual(parseTcpTarget(22), { host: 'localhost', port: 22, hostPort: 'localhost:22' });
    assert.deepEqual(parseTcpTarget('db.internal:5432'), { host: 'db.internal', port: 5432, hostPort: 'db.internal:5432' });
    assert.deepEqual(parseTcpTarget('[::1]:22'), { host: '::1', port: 22, hostPort: '[::1]:22' });
    assert.equal(parseTcpTarget('70000'), 'invalid local address "70000": expected a port or host:port');
    assert.equal(parseTcpTarget('http://x:1'), 'invalid local address "http://x:1": expected a port or host:port');
  });
});
