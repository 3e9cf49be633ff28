import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BodyFraming, visitorInterimHead, visitorResponseHead } from './response-head.js';

test('keeps the origin Content-Length and its headers in order, adding a Date when it sent none', () => {
  const head = visitorResponseHead(
    200,
    ['Content-Type', 'text/plain', 'Content-Length', '100', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'],
    'GET',
    true,
  )!;
  assert.equal(head.framing, BodyFraming.LENGTH);
  assert.equal(head.length, 100);
  const lines = head.text.split('\r\n');
  assert.deepEqual(lines.slice(0, 5), [
    'HTTP/1.1 200 OK',
    'Content-Type: text/plain',
    'Content-Length: 100',
    'Set-Cookie: a=1',
    'Set-Cookie: b=2',
  ]);
  assert.match(lines[5]!, /^date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  assert.ok(head.text.endsWith('\r\n\r\n'));
  assert.ok(!/connection:/i.test(head.text), 'HTTP/1.1 keeps the connection open by default');
});

test("passes the origin's own Date through instead of adding one", () => {
  const head = visitorResponseHead(404, ['Date', 'Tue, 01 Jan 2030 00:00:00 GMT', 'Content-Length', '0'], 'GET', true)!;
  assert.equal(head.text.match(/date:/gi)?.length, 1);
  assert.ok(head.text.startsWith('HTTP/1.1 404 Not Found\r\n'));
});

test('a body without a length is chunked; HEAD, 204 and 304 have none whatever the headers say', () => {
  assert.equal(visitorResponseHead(200, [], 'GET', true)!.framing, BodyFraming.CHUNKED);
  assert.match(visitorResponseHead(200, [], 'GET', true)!.text, /\r\ntransfer-encoding: chunked\r\n/);
  for (const [status, method] of [
    [200, 'HEAD'],
    [204, 'GET'],
    [304, 'GET'],
  ] as const) {
    const head = visitorResponseHead(status, ['Content-Length', '42'], method, true)!;
    assert.equal(head.framing, BodyFraming.NONE, `${status} ${method}`);
    assert.ok(!head.text.includes('transfer-encoding'));
    assert.match(head.text, /Content-Length: 42\r\n/, 'the length of the representation is kept');
  }
});

test('says connection: close when the connection will not be kept', () => {
  assert.match(visitorResponseHead(200, ['Content-Length', '1'], 'GET', false)!.text, /\r\nconnection: close\r\n\r\n$/);
});

test('refuses what Node would refuse: a bad status, a non-token name, a control byte in a value, a bad length', () => {
  assert.equal(visitorResponseHead(99, [], 'GET', true), undefined);
  assert.equal(visitorResponseHead(1000, [], 'GET', true), undefined);
  assert.equal(visitorResponseHead(101, [], 'GET', true), undefined, 'a 101 outside an upgrade');
  assert.equal(visitorResponseHead(200, ['Bad Name', 'x'], 'GET', true), undefined);
  assert.equal(visitorResponseHead(200, ['X-Split', 'a\r\nSet-Cookie: evil=1'], 'GET', true), undefined);
  assert.equal(visitorResponseHead(200, ['X-Nul', 'a\0b'], 'GET', true), undefined);
  assert.equal(visitorResponseHead(200, ['Content-Length', '12abc'], 'GET', true), undefined);
  assert.equal(visitorResponseHead(200, ['Content-Length', '1', 'Content-Length', '2'], 'GET', true), undefined);
  assert.equal(
    visitorResponseHead(200, ['Content-Length', '2', 'Content-Length', '2'], 'GET', true)!.length,
    2,
    'repeated equal lengths are one length',
  );
});

test('writes a 1xx head with its fields as the origin sent them', () => {
  assert.equal(
    visitorInterimHead(103, ['Link', '</style.css>; rel=preload; as=style']),
    'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n',
  );
  assert.equal(visitorInterimHead(100, []), 'HTTP/1.1 100 Continue\r\n\r\n');
});

test('refuses a 1xx head that is not one, is a 101, or could split the response', () => {
  assert.equal(visitorInterimHead(101, ['Upgrade', 'websocket']), undefined);
  assert.equal(visitorInterimHead(200, []), undefined);
  assert.equal(visitorInterimHead(99, []), undefined);
  assert.equal(visitorInterimHead(103, ['Link', '</a>\r\nSet-Cookie: x=1']), undefined);
  assert.equal(visitorInterimHead(103, ['Bad Name', 'x']), undefined);
});

test('a repeated head is the same text; each input that shapes it still counts', () => {
  const fields = ['Content-Type', 'text/plain', 'Content-Length', '5', 'Date', 'Tue, 01 Jan 2030 00:00:00 GMT'];
  const first = visitorResponseHead(200, fields, 'GET', true)!;
  assert.deepEqual(visitorResponseHead(200, [...fields], 'GET', true), first);
  assert.equal(visitorResponseHead(200, [...fields], 'HEAD', true)!.framing, BodyFraming.NONE);
  assert.equal(visitorResponseHead(200, [...fields], 'GET', true)!.framing, BodyFraming.LENGTH);
  assert.match(visitorResponseHead(200, [...fields], 'GET', false)!.text, /\r\nconnection: close\r\n\r\n$/);
  assert.doesNotMatch(visitorResponseHead(200, [...fields], 'GET', true)!.text, /connection: close/);
  assert.ok(visitorResponseHead(404, [...fields], 'GET', true)!.text.startsWith('HTTP/1.1 404 Not Found\r\n'));
  assert.equal(visitorResponseHead(200, [...fields.slice(0, 3), '6', ...fields.slice(4)], 'GET', true)!.length, 6);
  assert.equal(visitorResponseHead(200, [...fields, 'X-Split', 'a\nb'], 'GET', true), undefined);
  assert.equal(visitorResponseHead(200, [...fields, 'X-Split', 'a\nb'], 'GET', true), undefined);
});

test('a repeated head without a Date of its own takes the current second', (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.UTC(2030, 0, 1, 0, 0, 0, 500) });
  const fields = ['Content-Length', '0'];
  assert.match(visitorResponseHead(200, fields, 'GET', true)!.text, /\r\ndate: Tue, 01 Jan 2030 00:00:00 GMT\r\n/);
  t.mock.timers.tick(400);
  assert.match(visitorResponseHead(200, fields, 'GET', true)!.text, /\r\ndate: Tue, 01 Jan 2030 00:00:00 GMT\r\n/);
  t.mock.timers.tick(200);
  assert.match(visitorResponseHead(200, fields, 'GET', true)!.text, /\r\ndate: Tue, 01 Jan 2030 00:00:01 GMT\r\n/);
});
