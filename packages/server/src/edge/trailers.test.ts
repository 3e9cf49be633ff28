import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
import { test } from 'node:test';
import { responseHeaders } from './forwarding.js';
import { chunkedForVisitor, setH2Head } from './trailers.js';

const visitor = (version: string, method = 'GET'): IncomingMessage =>
  ({ httpVersionMajor: Number(version[0]), httpVersionMinor: Number(version[2]), method }) as IncomingMessage;

test('an HTTP/1.1 response is chunked (room for trailers) only with a body and no Content-Length', () => {
  assert.equal(chunkedForVisitor(visitor('1.1'), 200, ['content-type', 'text/plain']), true);
  assert.equal(chunkedForVisitor(visitor('1.1'), 200, ['Content-Length', '2']), false);
  assert.equal(chunkedForVisitor(visitor('1.1', 'HEAD'), 200, []), false);
  assert.equal(chunkedForVisitor(visitor('1.1'), 204, []), false);
  assert.equal(chunkedForVisitor(visitor('1.1'), 304, []), false);
  assert.equal(chunkedForVisitor(visitor('1.0'), 200, []), false);
});

test('the Trailer header passes unless the response has no room for trailers', () => {
  const raw = ['Trailer', 'x-checksum', 'Transfer-Encoding', 'chunked', 'Connection', 'close'];
  assert.deepEqual(responseHeaders(raw), ['Trailer', 'x-checksum']);
  assert.deepEqual(responseHeaders(raw, false), []);
});

test('a repeated response head is filtered as the first one was, into an array of its own each time', () => {
  const raw = [
    'Content-Type',
    'text/plain',
    'Connection',
    'keep-alive, X-Private',
    'Keep-Alive',
    'timeout=5',
    'X-Private',
    '1',
    'Trailer',
    'x-sum',
  ];
  const first = responseHeaders(raw);
  assert.deepEqual(first, ['Content-Type', 'text/plain', 'Trailer', 'x-sum']);
  first.push('X-Added', '1');
  const second = responseHeaders([...raw]);
  assert.deepEqual(second, ['Content-Type', 'text/plain', 'Trailer', 'x-sum']);
  assert.notEqual(second, first);
  assert.deepEqual(responseHeaders(raw, false), ['Content-Type', 'text/plain']);
  assert.deepEqual(responseHeaders(raw), ['Content-Type', 'text/plain', 'Trailer', 'x-sum']);
  const other = [...raw.slice(0, 2), 'Connection', 'keep-alive', ...raw.slice(4)];
  assert.deepEqual(responseHeaders(other), ['Content-Type', 'text/plain', 'X-Private', '1', 'Trailer', 'x-sum']);
  assert.deepEqual(responseHeaders([]), []);
});

test("an HTTP/2 204 goes out without the origin's Content-Length, which clients would reset the stream for", () => {
  const set: Record<string, unknown> = {};
  const res = { statusCode: 0, setHeader: (name: string, value: unknown) => (set[name] = value) } as unknown as Http2ServerResponse;
  setH2Head(res, 204, ['Content-Length', '5', 'X-A', '1']);
  assert.deepEqual(set, { 'x-a': '1' } as Record<string, unknown>);
  assert.equal(res.statusCode, 204);
  // Other statuses keep it: a 304's describes the representation, a 200's its body.
  setH2Head(res, 304, ['Content-Length', '5']);
  assert.equal(set['content-length'], '5');
});
