import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { SseClient } from '../test-support/sse-client.js';
import { EventStream } from './event-stream.js';

// EventStream on an HTTP/2 (h2c) response: the stream's flow-control window, not a socket
// buffer, is what fills when the client stops reading. (HTTP/1.1 is covered by the route's tests.)

describe('EventStream over HTTP/2', () => {
  let server: http2.Http2Server;
  let url: string;
  const streams: EventStream[] = [];
  before(async () => {
    server = http2.createServer((_req, res) => {
      streams.push(
        new EventStream(res, { maxQueued: 10, keepAliveMs: 60_000, droppedData: (count) => JSON.stringify({ dropped: count }) }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('queues, then drops, for a client that stops reading, and reports the count once it drains', async () => {
    const client = await SseClient.open(url, { http2: true });
    await client.until((events) => events.length >= 1, 'the stream to open');
    const stream = streams.at(-1)!;
    client.pause();
    const total = 2000;
    const payload = 'x'.repeat(1000);
    for (let i = 0; i < total; i++) {
      stream.send('request', String(i), payload);
      // One loop turn per ten events, as the inspector publishes batch by batch.
      if (i % 10 === 9) await nextLoopTurn();
    }
    assert.ok(stream.waiting, 'the response stopped taking writes');
    client.resume();
    await client.until(() => client.count('dropped') >= 1, 'a dropped event');
    const dropped = client.named('dropped').reduce((n, e) => n + (JSON.parse(e.data!) as { dropped: number }).dropped, 0);
    assert.ok(dropped > 0);
    await client.until(() => client.count() + dropped >= total, 'the queued events');
    assert.equal(client.count() + dropped, total);
    const ids = client.named().map((e) => Number(e.id));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'in order, gaps only where events were dropped',
    );
    client.close();
    await new Promise<void>((resolve) => stream.whenClosed(resolve));
    assert.ok(stream.closed);
  });
});
