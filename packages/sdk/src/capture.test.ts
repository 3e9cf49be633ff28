import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BodyCollector, CapturedExchange } from './capture.js';

test('a body is kept up to the limit, copied, with its full size and the truncation flag', () => {
  const collector = new BodyCollector(5);
  const chunk = Buffer.from('abc');
  collector.add(chunk);
  chunk.fill('z'); // the protocol may reuse its buffer: the capture must not change with it
  collector.add(Buffer.from('defgh'));
  assert.deepEqual(collector.result(), { size: 8, truncated: true, base64: Buffer.from('abcde').toString('base64') });
  assert.deepEqual(new BodyCollector(5).result(), { size: 0, truncated: false, base64: '' });
});

test('an exchange becomes one record, built when read, with the headers as sent by the visitor', () => {
  const head = { m: 'POST', p: '/hook', h: ['Host', 'a.example', 'Content-Type', 'text/plain'], t: 't', b: 1 as const };
  const stored: CapturedExchange[] = [];
  const tap = new CapturedExchange(head, 'https://a.example', 1024, (entry) => stored.push(entry));
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
