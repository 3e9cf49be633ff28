import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HAND_OVER, INCOMPLETE, readRequestHead, type LeanRequest } from './request-head.js';

const MAX = 32 * 1024;

function read(text: string, start = 0): ReturnType<typeof readRequestHead> {
  return readRequestHead(Buffer.from(text, 'latin1'), start, MAX);
}

function lean(text: string): LeanRequest {
  const result = read(text);
  assert.equal(typeof result, 'object', `expected a lean request for ${JSON.stringify(text)}`);
  return result as LeanRequest;
}

test('reads a body-less HTTP/1.1 request: method, target, headers as sent, host, user agent', () => {
  const text = 'GET /a/b?c=d%20e HTTP/1.1\r\nHost: App.Example.com:8080\r\nUser-Agent: curl/8.0\r\nX-Two:  spaced  value \r\n\r\n';
  const request = lean(text);
  assert.equal(request.method, 'GET');
  assert.equal(request.target, '/a/b?c=d%20e');
  assert.deepEqual(request.rawHeaders, ['Host', 'App.Example.com:8080', 'User-Agent', 'curl/8.0', 'X-Two', 'spaced  value']);
  assert.equal(request.host, 'App.Example.com:8080');
  assert.equal(request.userAgent, 'curl/8.0');
  assert.equal(request.close, false);
  assert.equal(request.headBytes, Buffer.byteLength(text));
});

test('reads from an offset and reports only the head, leaving pipelined bytes after it', () => {
  const first = 'GET /1 HTTP/1.1\r\nHost: a\r\n\r\n';
  const second = 'GET /2 HTTP/1.1\r\nHost: a\r\n\r\n';
  const buffer = Buffer.from(first + second, 'latin1');
  const one = readRequestHead(buffer, 0, MAX) as LeanRequest;
  assert.equal(one.target, '/1');
  assert.equal(one.headBytes, first.length);
  const two = readRequestHead(buffer, one.headBytes, MAX) as LeanRequest;
  assert.equal(two.target, '/2');
});

test('Connection: close (any case, in a list) asks for the connection to close after the answer', () => {
  assert.equal(lean('GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n').close, true);
  assert.equal(lean('GET / HTTP/1.1\r\nHost: a\r\nconnection: X-Foo, Close\r\n\r\n').close, true);
  assert.equal(lean('GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n').close, false);
  assert.equal(lean('GET / HTTP/1.1\r\nHost: a\r\nConnection: closer\r\n\r\n').close, false);
});

test('keeps obs-text and tabs inside values, and an empty value', () => {
  const request = lean('GET / HTTP/1.1\r\nHost: a\r\nX-Latin: caf\xe9\tau lait\r\nX-Empty:\r\n\r\n');
  assert.deepEqual(request.rawHeaders.slice(2), ['X-Latin', 'caf\xe9\tau lait', 'X-Empty', '']);
});

test('a head not all here yet is incomplete, unless it is already over the limit', () => {
  assert.equal(read('GET / HTTP/1.1\r\nHost: a\r\n'), INCOMPLETE);
  assert.equal(read('GET / HTTP/1.1\r\nHost: a\r\n\r'), INCOMPLETE);
  assert.equal(readRequestHead(Buffer.from(`GET / HTTP/1.1\r\nX: ${'a'.repeat(MAX)}`), 0, MAX), HAND_OVER);
  assert.equal(readRequestHead(Buffer.from(`GET / HTTP/1.1\r\nX: ${'a'.repeat(MAX)}\r\n\r\n`), 0, MAX), HAND_OVER);
});

test("hands everything outside the lean shape to Node's parser", () => {
  const cases: Record<string, string> = {
    'a body by Content-Length': 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello',
    'a chunked body': 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'a Content-Length that is not a plain zero': 'GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 00\r\n\r\n',
    'two Content-Length: 0 headers (Node answers 400)': 'GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n',
    'an upgrade': 'GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
    'Connection: upgrade without Upgrade': 'GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\n\r\n',
    Expect: 'PUT / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n',
    'HTTP/1.0': 'GET / HTTP/1.0\r\nHost: a\r\n\r\n',
    'HTTP/2 preface': 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    'an absolute-form target': 'GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n',
    'an asterisk target': 'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n',
    'no Host': 'GET / HTTP/1.1\r\nX: y\r\n\r\n',
    'two Host headers': 'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n',
    'a space before the colon': 'GET / HTTP/1.1\r\nHost : a\r\n\r\n',
    'a folded header line': 'GET / HTTP/1.1\r\nHost: a\r\nX: one\r\n two\r\n\r\n',
    'a bare LF inside the head': 'GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n',
    'a bare CR in a value': 'GET / HTTP/1.1\r\nHost: a\r\nX: y\rz\r\n\r\n',
    'a NUL in a value': 'GET / HTTP/1.1\r\nHost: a\r\nX: y\0z\r\n\r\n',
    'a control byte in the target': 'GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n',
    'two spaces in the request line': 'GET  / HTTP/1.1\r\nHost: a\r\n\r\n',
    'a lower-case version': 'GET / http/1.1\r\nHost: a\r\n\r\n',
    'a lower-case method (Node answers 400)': 'get / HTTP/1.1\r\nHost: a\r\n\r\n',
    'a method Node does not know': 'FOO / HTTP/1.1\r\nHost: a\r\n\r\n',
    'a header name with a slash': 'GET / HTTP/1.1\r\nHost: a\r\nX/Y: z\r\n\r\n',
    'leading empty line': '\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n',
    'too many header lines': `GET / HTTP/1.1\r\nHost: a\r\n${'X: y\r\n'.repeat(64)}\r\n`,
  };
  for (const [name, text] of Object.entries(cases)) assert.equal(read(text), HAND_OVER, name);
});

test('an explicit Content-Length: 0 and hop-by-hop headers other than Upgrade stay lean (requestHead strips them)', () => {
  const request = lean('DELETE /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\n\r\n');
  assert.equal(request.method, 'DELETE');
  assert.deepEqual(request.rawHeaders, ['Host', 'a', 'Content-Length', '0', 'Keep-Alive', 'timeout=5', 'TE', 'trailers']);
});

test('a repeated head reads as the first one did, with a header array of its own each time', () => {
  const text = 'GET /poll HTTP/1.1\r\nHost: a.example\r\nUser-Agent: poller\r\nConnection: close\r\n\r\n';
  const headers = ['Host', 'a.example', 'User-Agent', 'poller', 'Connection', 'close'];
  const first = lean(text);
  first.rawHeaders.push('X-Edited', '1');
  const second = lean(text);
  assert.deepEqual(second, {
    method: 'GET',
    target: '/poll',
    rawHeaders: headers,
    host: 'a.example',
    userAgent: 'poller',
    close: true,
    headBytes: text.length,
  });
  assert.notEqual(second.rawHeaders, first.rawHeaders);
  // At an offset, with pipelined bytes after it.
  const before = 'GET /other HTTP/1.1\r\nHost: b\r\n\r\n';
  const third = read(`${before}${text}GET /next`, before.length) as LeanRequest;
  assert.deepEqual(third, second);
  // One byte changed is read anew.
  assert.equal(lean(text.replace('/poll', '/pole')).target, '/pole');
  assert.equal(lean(text).target, '/poll');
  // The head limit still applies to a head read before.
  assert.equal(readRequestHead(Buffer.from(text, 'latin1'), 0, 20), HAND_OVER);
  // What is handed over is never remembered as a lean request.
  const upgrade = 'GET /poll HTTP/1.1\r\nHost: a.example\r\nUpgrade: websocket\r\n\r\n';
  assert.equal(read(upgrade), HAND_OVER);
  assert.equal(read(upgrade), HAND_OVER);
});
