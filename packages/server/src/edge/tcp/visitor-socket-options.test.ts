import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type Socket } from 'node:net';
import { test } from 'node:test';
import { inheritVisitorSocketOptions } from './visitor-socket-options.js';

// Whether the accepted sockets really carry the options is read from the kernel's socket table
// by the whole-system test test/e2e/tcp-keepalive.test.ts; this one checks the handle's answer.

test('inheritVisitorSocketOptions: set on a listening server on Linux, refused before it listens', async () => {
  const server = net.createServer((socket: Socket) => socket.destroy());
  assert.equal(inheritVisitorSocketOptions(server), false, 'no handle before listen');
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    assert.equal(inheritVisitorSocketOptions(server), process.platform === 'linux');
  } finally {
    server.close();
  }
});
