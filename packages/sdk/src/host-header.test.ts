import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RequestHead } from '@svcrouter/protocol';
import { applyHostRewrite, hostHeaderProblem, hostRewrite, publicOrigin, rewriteLocation } from './host-header.js';
import { parseLocalTarget, type LocalTarget } from './local-target.js';

const target = parseLocalTarget('5173') as LocalTarget;
const head = (pairs: string[]): RequestHead => ({ m: 'GET', p: '/', h: pairs, t: 'tun' });

test('rewrite means the local target host; a value is sent as given; nothing means no rewrite', () => {
  assert.equal(hostRewrite('rewrite', target)?.host, 'localhost:5173');
  assert.equal(hostRewrite('app.internal', target)?.host, 'app.internal');
  assert.equal(hostRewrite(undefined, target), undefined);
});

test('the Host pair is replaced in place, whatever its case, and added when missing', () => {
  const rewrite = hostRewrite('rewrite', target)!;
  const withHost = head(['HOST', 'a.example', 'accept', '*/*']);
  applyHostRewrite(withHost, rewrite);
  assert.deepEqual(withHost.h, ['HOST', 'localhost:5173', 'accept', '*/*']);
  const without = head(['accept', '*/*']);
  applyHostRewrite(without, rewrite);
  assert.deepEqual(without.h, ['accept', '*/*', 'Host', 'localhost:5173']);
});

test('a Location on the local origin becomes the visitor origin; others stay', () => {
  const rewrite = hostRewrite('rewrite', target)!;
  const visitor = head(['X-Forwarded-Proto', 'https', 'x-forwarded-host', 'a.example']);
  assert.equal(publicOrigin(visitor), 'https://a.example');
  const headers = ['Location', 'http://localhost:5173/next?x=1', 'location', 'http://localhost:51730/', 'x', 'http://localhost:5173/'];
  rewriteLocation(headers, rewrite, visitor);
  assert.deepEqual(headers, [
    'Location',
    'https://a.example/next?x=1',
    'location',
    'http://localhost:51730/',
    'x',
    'http://localhost:5173/',
  ]);
  const unknown = ['Location', 'http://localhost:5173/'];
  rewriteLocation(unknown, rewrite, head(['accept', '*/*']));
  assert.deepEqual(unknown, ['Location', 'http://localhost:5173/'], 'no visitor origin: left alone');
});

test('a host header option is rewrite or a host with an optional port; anything else is refused by name', () => {
  for (const good of ['rewrite', 'localhost:5173', 'app.internal', '127.0.0.1:3000', '[::1]:8080', 'my_host']) {
    assert.equal(hostHeaderProblem(good), undefined, good);
  }
  for (const bad of ['a b', 'x\r\nEvil: 1', 'host/path', 'host:', 'host:123456', '']) {
    assert.equal(
      hostHeaderProblem(bad),
      `invalid host header ${JSON.stringify(bad)}: expected "rewrite" or a host name, optionally with :port`,
      bad,
    );
  }
});
