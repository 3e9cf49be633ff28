import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isOriginProto, parseLocalTarget } from './local-target.js';

test('a target speaks HTTP/1.1 unless proto says h2; an h2c:// target is always h2', () => {
  assert.deepEqual(parseLocalTarget('3000'), {
    origin: 'http://localhost:3000',
    hostPort: 'localhost:3000',
    protocol: 'http:',
    proto: 'http1',
  });
  assert.equal((parseLocalTarget('https://api.local:8443', 'h2') as { proto: string }).proto, 'h2');
  assert.deepEqual(parseLocalTarget('h2c://127.0.0.1:50051'), {
    origin: 'http://127.0.0.1:50051',
    hostPort: '127.0.0.1:50051',
    protocol: 'http:',
    proto: 'h2',
  });
  assert.equal((parseLocalTarget('H2C://localhost:9000', 'http1') as { proto: string }).proto, 'h2');
});

test('other schemes and an h2c:// target with a path are refused with a sentence', () => {
  assert.match(parseLocalTarget('ftp://x:21') as string, /only http, https and h2c/);
  assert.match(parseLocalTarget('h2c://x:1/path') as string, /give only scheme, host and port/);
});

test('isOriginProto knows http1 and h2 only', () => {
  assert.ok(isOriginProto('h2'));
  assert.ok(isOriginProto('http1'));
  assert.ok(!isOriginProto('h3'));
  assert.ok(!isOriginProto(undefined));
});

test('a negative port is refused as a port, not taken for a host named "-1"', () => {
  assert.equal(parseLocalTarget(-1), 'invalid local port "-1": expected 1-65535');
  assert.equal(parseLocalTarget('-3000'), 'invalid local port "-3000": expected 1-65535');
});

test('a host the URL parser would read as a number is refused, not sent to 0.0.0.80', () => {
  assert.equal(
    parseLocalTarget('0x50'),
    'invalid local address "0x50": "0x50" is not a port (a decimal number, 1-65535) and not a full IPv4 address',
  );
  assert.equal(
    parseLocalTarget('80.0:3000'),
    'invalid local address "80.0:3000": "80.0" is not a port (a decimal number, 1-65535) and not a full IPv4 address',
  );
  assert.equal(parseLocalTarget('+80'), 'invalid local address "+80": "+80" is not a host name');
  // What users do type is kept: a port with a leading zero, full addresses, names, IPv6 literals.
  assert.equal((parseLocalTarget('080') as { origin: string }).origin, 'http://localhost');
  assert.equal((parseLocalTarget('127.0.0.1:3000') as { origin: string }).origin, 'http://127.0.0.1:3000');
  assert.equal((parseLocalTarget('https://API.example:8443') as { origin: string }).origin, 'https://api.example:8443');
  assert.equal((parseLocalTarget('web_1:8080') as { hostPort: string }).hostPort, 'web_1:8080');
  assert.equal((parseLocalTarget('[::1]:3000') as { origin: string }).origin, 'http://[::1]:3000');
  assert.equal((parseLocalTarget('h2c://localhost:50051') as { proto: string }).proto, 'h2');
});
