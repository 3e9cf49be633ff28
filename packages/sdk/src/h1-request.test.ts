import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestHead } from '@svcrouter/protocol';
import { frameRequest } from './h1-request.js';

function head(fields: Partial<RequestHead>): RequestHead {
  return { m: 'GET', p: '/', h: ['Host', 'app.test'], t: 'tun_1', ...fields };
}

describe('frameRequest', () => {
  it('writes the request line and the headers in their order, names as given', () => {
    const framing = frameRequest(head({ p: '/a?b=1', h: ['Host', 'app.test', 'X-One', '1', 'x-two', '2', 'X-One', '3'] }));
    assert.equal(framing.head, 'GET /a?b=1 HTTP/1.1\r\nHost: app.test\r\nX-One: 1\r\nx-two: 2\r\nX-One: 3\r\n\r\n');
    assert.equal(framing.chunked, false);
  });

  it('keeps the Content-Length of a body and sends it as it is', () => {
    const framing = frameRequest(head({ m: 'POST', b: 1, h: ['Host', 'app.test', 'content-length', '42'] }));
    assert.equal(framing.contentLength, 42);
    assert.equal(framing.chunked, false);
    assert.ok(!framing.head.includes('Transfer-Encoding'));
  });

  it('chunk-encodes a body that has no Content-Length', () => {
    const framing = frameRequest(head({ m: 'POST', b: 1 }));
    assert.equal(framing.chunked, true);
    assert.equal(framing.head, 'POST / HTTP/1.1\r\nHost: app.test\r\nTransfer-Encoding: chunked\r\n\r\n');
  });

  it('adds no framing to a request without a body', () => {
    const framing = frameRequest(head({ m: 'DELETE' }));
    assert.equal(framing.chunked, false);
    assert.equal(framing.head, 'DELETE / HTTP/1.1\r\nHost: app.test\r\n\r\n');
  });

  for (const [what, fields] of [
    ['the path', { p: '/\r\nX-Evil: 1' }],
    ['the method', { m: 'GET /x HTTP/1.1\n' }],
    ['a header name', { h: ['Host', 'app.test', 'X-A\r\nX-B', '1'] }],
    ['a header value', { h: ['Host', 'app.test\rX-Evil: 1'] }],
  ] as const) {
    it(`refuses a line break in ${what}`, () => {
      assert.throws(() => frameRequest(head(fields as Partial<RequestHead>)), /line break/);
    });
  }
});
