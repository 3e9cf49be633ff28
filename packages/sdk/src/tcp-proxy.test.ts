import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLoopbackHost, parseTcpTarget } from './tcp-proxy.js';

test('isLoopbackHost: this machine by name or loopback address, nothing else', () => {
  for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
    assert.equal(isLoopbackHost(host), true, host);
  }
  for (const host of ['192.168.1.5', '10.0.0.1', '128.0.0.1', '::2', 'fd00::1', 'db.internal', 'localhost.example.com', '0.0.0.0']) {
    assert.equal(isLoopbackHost(host), false, host);
  }
});

test('isLoopbackHost: a target without a host connects to localhost', () => {
  const target = parseTcpTarget('22');
  assert.ok(typeof target !== 'string');
  assert.equal(isLoopbackHost(target.host), true);
});
