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
