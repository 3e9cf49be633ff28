import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasValidFields, isResponseHead, stripHopByHop } from './headers.js';

test('stripHopByHop removes every hop-by-hop header, any case, and keeps order and case', () => {
  const raw = [
    'Host',
    'example.test',
    'Connection',
    'keep-alive',
    'Keep-Alive',
    'timeout=5',
    'Proxy-Connection',
    'keep-alive',
    'Proxy-Authenticate',
    'Basic',
    'Proxy-Authorization',
    'Basic abc',
    'TE',
    'trailers',
    'Trailer',
    'Expires',
    'Transfer-Encoding',
    'chunked',
    'Upgrade',
    'websocket',
    'HTTP2-Settings',
    'AAMAAABkAAQAAP__',
    'X-Custom',
    'a',
    'accept',
    'text/html',
  ];
  assert.deepEqual(stripHopByHop(raw), ['Host', 'example.test', 'X-Custom', 'a', 'accept', 'text/html']);
});

test('stripHopByHop removes headers named in Connection, with spaces and several Connection headers', () => {
  const raw = ['Connection', 'X-Foo ,  x-bar', 'x-foo', '1', 'X-BAR', '2', 'connection', 'X-Baz', 'x-baz', '3', 'x-kept', '4'];
  assert.deepEqual(stripHopByHop(raw), ['x-kept', '4']);
});

test('stripHopByHop ignores empty tokens in Connection', () => {
  assert.deepEqual(stripHopByHop(['Connection', ', ,close,', 'a', '1']), ['a', '1']);
});

test('stripHopByHop removes pseudo-headers', () => {
  const raw = [':method', 'GET', ':path', '/', ':authority', 'example.test', ':scheme', 'https', 'accept', '*/*'];
  assert.deepEqual(stripHopByHop(raw), ['accept', '*/*']);
});

test('stripHopByHop keeps the names in `keep`, both listed and named by Connection', () => {
  const raw = ['Connection', 'Upgrade, X-Drop', 'Upgrade', 'websocket', 'X-Drop', '1', 'Keep-Alive', '5'];
  const keep = new Set(['upgrade', 'connection']);
  assert.deepEqual(stripHopByHop(raw, keep), ['Connection', 'Upgrade, X-Drop', 'Upgrade', 'websocket']);
});

test('stripHopByHop returns a new array and leaves the input alone', () => {
  const raw = ['TE', 'trailers', 'a', '1'];
  const out = stripHopByHop(raw);
  assert.deepEqual(raw, ['TE', 'trailers', 'a', '1']);
  assert.notEqual(out, raw);
  assert.deepEqual(stripHopByHop([]), []);
});

test('isResponseHead accepts only an integer status from 100 to 599 and an even list of strings', () => {
  assert.equal(isResponseHead({ s: 200, h: ['a', 'b'] }), true);
  assert.equal(isResponseHead({ s: 101, h: [] }), true);
  for (const bad of [
    null,
    'x',
    { s: { a: 1 }, h: [] },
    { s: '200', h: [] },
    { s: 200.5, h: [] },
    { s: 99, h: [] },
    { s: 600, h: [] },
    { s: 200 },
    { s: 200, h: ['a'] },
    { s: 200, h: [1, 2] },
  ]) {
    assert.equal(isResponseHead(bad), false, JSON.stringify(bad));
  }
});

test('hasValidFields refuses a name that is not a token and a value with CR, LF, NUL or another control byte', () => {
  assert.equal(hasValidFields(['X-A', 'a b\tc', 'ETag', '"é"']), true);
  for (const pairs of [
    ['Bad Name', 'x'],
    ['X-A', 'a\r\nInjected: 1'],
    ['X-A', 'a\nb'],
    ['X-A', 'a\0b'],
    ['X-A', 'a\x7fb'],
    ['', 'x'],
  ]) {
    assert.equal(hasValidFields(pairs), false, JSON.stringify(pairs));
  }
});
