import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BodyCollector, CapturedExchange } from './capture.js';

test('a body is kept up to the limit, with its full size and the truncation flag', () => {
  const collector = new BodyCollector(5);
  collector.add(Buffer.from('abc'));
  collector.add(Buffer.from('defgh'));
  assert.deepEqual(collector.result(), { size: 8, truncated: true, base64: Buffer.from('abcde').toString('base64') });
  assert.deepEqual(new BodyCollector(5).result(), { size: 0, truncated: false, base64: '' });
});

test('a piece is kept by reference while what it pins fits the limit, copied after that', () => {
  const collector = new BodyCollector(8);
  const small = new Uint8Array(4);
  const own = Buffer.from(small.buffer); // a socket read: a buffer of its own, exactly its bytes
  own.write('abcd');
  collector.add(own);
  own.write('wxyz'); // kept by reference: what the capture shows is the bytes as they are
  const large = Buffer.alloc(64, 'e'); // pins 64 bytes, more than the limit: copied
  collector.add(large.subarray(0, 6));
  large.fill('z');
  assert.equal(Buffer.from(collector.result().base64, 'base64').toString(), 'wxyzeeee');
  assert.equal(collector.result().truncated, true);
});

test('an exchange becomes one record, built when read, with the headers as sent by the visitor', () => {
  const head = { m: 'POST', p: '/hook', h: ['Host', 'a.example', 'Content-Type', 'text/plain'], t: 't', b: 1 as const };
  const stored: CapturedExchange[] = [];
  const sink = { stored: (entry: CapturedExchange) => stored.push(entry) };
  const tap = new CapturedExchange(head, { url: 'https://a.example' }, 1024, sink, true);
  head.h[1] = 'localhost:3000'; // the host rewrite edits the head in place after capture starts
  tap.requestBody(Buffer.from('hi'));
  tap.response(201, ['Location', '/x']);
  tap.responseBody(Buffer.from('done'));
  tap.done({ method: 'POST', path: '/hook', status: 201, durationMs: 1.234 });
  tap.done({ method: 'POST', path: '/hook', status: 499, durationMs: 9 });
  assert.equal(stored.length, 1);
  const record = stored[0]!.record();
  assert.equal(stored[0]!.record(), record, 'built once');
  assert.deepEqual(record!.request.headers, [
    ['Host', 'a.example'],
    ['Content-Type', 'text/plain'],
  ]);
  assert.equal(record!.status, 201);
  assert.equal(record!.durationMs, 1.2);
  assert.deepEqual(record!.response, {
    headers: [['Location', '/x']],
    body: { size: 4, truncated: false, base64: Buffer.from('done').toString('base64') },
  });
  assert.ok(!Number.isNaN(Date.parse(record!.startedAt)));
});
