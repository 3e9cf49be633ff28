import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Messages } from '@svcrouter/protocol';
import { ApiClient, ApiError } from './api-client.js';
import type { CapturedRequest, RequestStreamEvent } from './api-types.js';

// requests.stream() against a local event-stream server: the SSE framing, the query, the
// token, abort and early exit, and errors, without the whole svc-server.

const TOKEN = 'svc_test';
const record: CapturedRequest = {
  id: 'req_1',
  tunnelId: 'tun_1',
  timestamp: '2026-11-25T12:00:00.000Z',
  method: 'GET',
  path: '/hello',
  status: 404,
  durationMs: 3,
  bytes: 9,
  ip: '127.0.0.1',
  userAgent: 'test',
  proto: 'HTTP/1.1',
  host: 'a.localhost',
  target: null,
};

describe('requests.stream', () => {
  let server: http.Server;
  let baseUrl: string;
  const seen: Array<{ url: string; authorization: string | undefined; accept: string | undefined }> = [];
  const streams: http.ServerResponse[] = [];
  let streamClosed: Promise<unknown> = Promise.resolve();

  before(async () => {
    server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization, accept: req.headers.accept });
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      streamClosed = once(res, 'close');
      streams.push(res);
      // The record is cut in two writes, as TCP may deliver it.
      const event = `event: request\nid: ${record.id}\ndata: ${JSON.stringify(record)}\n\n`;
      res.write(`: keep-alive\n\n${event.slice(0, 40)}`);
      setImmediate(() => res.write(`${event.slice(40)}event: dropped\ndata: {"dropped":2,"message":"2 records skipped"}\n\n`));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const res of streams) res.destroy();
    server.close();
    await once(server, 'close');
  });

  it('yields request and dropped events, sends the filters and token, and a break closes the connection', async () => {
    const client = new ApiClient({ baseUrl, token: TOKEN });
    const events: RequestStreamEvent[] = [];
    for await (const event of client.requests.stream({ status: 404, host: 'a.localhost' })) {
      events.push(event);
      if (events.length === 2) break;
    }
    assert.deepEqual(events, [
      { type: 'request', id: 'req_1', request: record },
      { type: 'dropped', dropped: 2, message: '2 records skipped' },
    ]);
    const request = seen.at(-1)!;
    const url = new URL(request.url, baseUrl);
    assert.equal(url.pathname, '/v1/requests/stream');
    assert.deepEqual(Object.fromEntries(url.searchParams), { status: '404', host: 'a.localhost' });
    assert.equal(request.authorization, `Bearer ${TOKEN}`);
    assert.equal(request.accept, 'text/event-stream');
    await streamClosed;
  });

  it('ends quietly when the signal aborts while waiting for events', async () => {
    const client = new ApiClient({ baseUrl, token: TOKEN });
    const abort = new AbortController();
    const events: RequestStreamEvent[] = [];
    for await (const event of client.requests.stream({}, { signal: abort.signal })) {
      events.push(event);
      // After the second event the server sends nothing more: the loop waits until the abort.
      if (events.length === 2) abort.abort();
    }
    assert.equal(events.length, 2);
    await streamClosed;
  });

  it('does not connect when the signal is already aborted', async () => {
    const client = new ApiClient({ baseUrl, token: TOKEN });
    const before = seen.length;
    const events: RequestStreamEvent[] = [];
    for await (const event of client.requests.stream({}, { signal: AbortSignal.abort() })) events.push(event);
    assert.deepEqual(events, []);
    assert.equal(seen.length, before);
  });

  it('rejects with ApiError when the token is refused', async () => {
    const client = new ApiClient({ baseUrl, token: 'svc_wrong' });
    await assert.rejects(
      async () => {
        for await (const _event of client.requests.stream()) assert.fail('no event expected');
      },
      (error: unknown) =>
        error instanceof ApiError && error.status === 401 && error.code === 'unauthorized' && error.message === Messages.TOKEN_INVALID,
    );
  });

  it('rejects with ApiError unreachable when nothing listens', async () => {
    const closed = http.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    const client = new ApiClient({ baseUrl: `http://127.0.0.1:${port}`, token: TOKEN });
    await assert.rejects(
      async () => {
        for await (const _event of client.requests.stream()) assert.fail('no event expected');
      },
      (error: unknown) =>
        error instanceof ApiError && error.status === 0 && error.code === 'unreachable' && /ECONNREFUSED/.test(error.message),
    );
  });
});
