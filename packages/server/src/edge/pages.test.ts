import assert from 'node:assert/strict';
import { test } from 'node:test';
import { offlinePage, pageResponse } from './pages.js';

test('an edge page is a whole response with its length, and only a head for HEAD', () => {
  const page = offlinePage('gone.example.com');
  const get = pageResponse(page, 'GET', true);
  const [head, body] = get.split('\r\n\r\n') as [string, string];
  assert.ok(head.startsWith('HTTP/1.1 404 Not Found\r\n'));
  assert.equal(Number(/content-length: (\d+)/.exec(head)![1]), Buffer.byteLength(body));
  assert.ok(!head.includes('connection: close'));
  assert.ok(pageResponse(page, 'HEAD', false).endsWith('connection: close\r\n\r\n'));
});
