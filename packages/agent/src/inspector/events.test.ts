import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { Inspector } from '@svcrouter/sdk';
import { startInspectorServer } from './server.js';

/** Captures one exchange with a `size`-byte request body, as a tunnel's forwarding would. */
function capture(inspector: Inspector, size: number): void {
  const exchange = inspector.tap({ url: 'https://a.example', target: { hostPort: 'localhost:3000' } as never })({
    m: 'POST',
    p: '/hook',
    h: ['content-length', String(size)],
    t: '',
  });
  exchange.requestBody(Buffer.alloc(size, 120));
  exchange.response(200, []);
  exchange.done({ method: 'POST', path: '/hook', status: 200, durationMs: 1 });
}

test('a live stream whose reader stopped reading is dropped, not buffered without end', async () => {
  const inspector = new Inspector();
  const server = await startInspectorServer(inspector, '127.0.0.1:0');
  const socket = net.connect(server.port, '127.0.0.1');
  try {
    await once(socket, 'connect');
    socket.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`);
    // The reader takes the first bytes, then reads no more.
    await once(socket, 'data');
    socket.pause();
    assert.equal(inspector.listenerCount('request'), 1);
    // 64 KiB bodies, about 87 KiB of JSON each: far past the kernel's buffers and the limit.
    for (let batch = 0; batch < 40 && inspector.listenerCount('request') > 0; batch++) {
      for (let i = 0; i < 10; i++) capture(inspector, 64 * 1024);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(inspector.listenerCount('request'), 0);
  } finally {
    socket.destroy();
    await server.close();
  }
});
