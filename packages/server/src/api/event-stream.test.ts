import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextLoopTurn } from 'node:timers/promises';
import { after, afterEach, before, beforeEach, describe, it, mock } from 'node:test';
import { SseClient } from '@svcrouter/testkit/sse-client';
import { EventStream } from './event-stream.js';
import type { ApiResponse } from './http-io.js';

// EventStream on an HTTP/2 (h2c) response: the stream's flow-control window, not a socket
// buffer, is what fills when the client stops reading. (HTTP/1.1 is covered by the route's tests.)

describe('EventStream over HTTP/2', () => {
  let server: http2.Http2Server;
  let url: string;
  const streams: EventStream[] = [];
  before(async () => {
    server = http2.createServer((_req, res) => {
      streams.push(
        new EventStream(res, {
          maxQueued: 10,
          keepAliveMs: 60_000,
          coalesceMs: 0,
          droppedData: (count) => JSON.stringify({ dropped: count }),
        }),
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

/** A response that records its writes: enough of ServerResponse for EventStream's timing. */
class RecordingResponse extends EventEmitter {
  readonly writes: string[] = [];
  writableEnded = false;
  /** While true, write() says the buffer is full (the client is not reading). */
  full = false;
  writeHead(): this {
    return this;
  }
  write(chunk: string | Buffer): boolean {
    this.writes.push(String(chunk));
    return !this.full;
  }
  end(): void {
    this.writableEnded = true;
  }
}

describe('EventStream coalescing', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval'] }));
  afterEach(() => mock.timers.reset());
  const open = (coalesceMs: number) => {
    const res = new RecordingResponse();
    const stream = new EventStream(res as unknown as ApiResponse, { maxQueued: 10, keepAliveMs: 60_000, coalesceMs, droppedData: String });
    return { res, stream };
  };

  it('writes the events of a whole period together, in order, once the period is over', async () => {
    const { res, stream } = open(40);
    assert.deepEqual(res.writes, [': stream open\n\n']);
    for (let i = 0; i < 3; i++) {
      stream.send('request', String(i), `d${i}`);
      await nextLoopTurn();
      mock.timers.tick(10);
    }
    assert.equal(res.writes.length, 1, 'nothing is written before the period is over');
    mock.timers.tick(10);
    assert.deepEqual(res.writes.slice(1), [
      'event: request\nid: 0\ndata: d0\n\nevent: request\nid: 1\ndata: d1\n\nevent: request\nid: 2\ndata: d2\n\n',
    ]);
    stream.send('request', '3', 'd3');
    mock.timers.tick(40);
    assert.equal(res.writes.length, 3, 'the next event starts the next period');
    stream.close();
  });

  it('keeps the order of events across a full buffer: what waited goes out in one write once it drains', () => {
    const { res, stream } = open(40);
    res.full = true;
    stream.send('request', '0', 'a');
    mock.timers.tick(40);
    assert.ok(stream.waiting, 'the write found the buffer full');
    stream.send('request', '1', 'b');
    stream.send('request', '2', 'c');
    mock.timers.tick(40);
    assert.equal(res.writes.length, 2, 'queued events wait for the drain, not the timer');
    res.full = false;
    res.emit('drain');
    assert.deepEqual(res.writes.slice(1), [
      'event: request\nid: 0\ndata: a\n\n',
      'event: request\nid: 1\ndata: b\n\nevent: request\nid: 2\ndata: c\n\n',
    ]);
    stream.close();
  });

  it('sends a dropped event after the events sent before it', () => {
    const { res, stream } = open(40);
    stream.send('request', '0', 'a');
    stream.countDropped(2);
    assert.equal(res.writes.slice(1).join(''), 'event: request\nid: 0\ndata: a\n\nevent: dropped\ndata: 2\n\n');
    const written = res.writes.length;
    mock.timers.tick(40);
    assert.equal(res.writes.length, written, 'nothing left pending');
    stream.close();
  });

  it('writes at once on flush(), and nothing after close()', () => {
    const { res, stream } = open(20);
    stream.send('request', 'a', 'x');
    stream.flush();
    assert.equal(res.writes.length, 2);
    mock.timers.tick(20);
    assert.equal(res.writes.length, 2, 'flush() cancelled the timer');
    stream.send('request', 'b', 'y');
    stream.close();
    mock.timers.tick(20);
    assert.equal(res.writes.length, 2, 'the closed stream wrote nothing more');
    assert.ok(res.writableEnded);
  });
});
