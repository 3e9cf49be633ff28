import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSse, type SseEvent } from './sse.js';

async function parse(chunks: string[]): Promise<SseEvent[]> {
  async function* source() {
    yield* chunks;
  }
  const events: SseEvent[] = [];
  for await (const event of parseSse(source())) events.push(event);
  return events;
}

test('named events with ids, comments skipped, default event name is message', async () => {
  const events = await parse([': keep-alive\n\nevent: request\nid: r1\ndata: {"a":1}\n\ndata: plain\n\n']);
  assert.deepEqual(events, [
    { event: 'request', data: '{"a":1}', id: 'r1' },
    { event: 'message', data: 'plain', id: 'r1' },
  ]);
});

test('lines split anywhere across chunks, CRLF split between chunks, CR and LF endings', async () => {
  const text = 'event: dropped\r\ndata: {"dropped": 3,\r\ndata:  "message": "x"}\r\n\r\nevent:request\rid:7\rdata:y\r\r';
  const oneByOne = await parse([...text]);
  const whole = await parse([text]);
  assert.deepEqual(oneByOne, whole);
  assert.deepEqual(whole, [
    // One leading space is part of the syntax; a second one is data.
    { event: 'dropped', data: '{"dropped": 3,\n "message": "x"}', id: '' },
    { event: 'request', data: 'y', id: '7' },
  ]);
});

test('a leading BOM is dropped, events without data and an unterminated last event are not dispatched', async () => {
  const events = await parse(['\uFEFFevent: a\n\n', 'data\n\n', 'event: b\ndata: cut']);
  assert.deepEqual(events, [{ event: 'message', data: '', id: '' }]);
});

test('an id with a NUL is ignored and earlier ids carry over', async () => {
  const events = await parse(['id: 1\ndata: a\n\nid: x\0y\ndata: b\n\n']);
  assert.deepEqual(
    events.map((event) => event.id),
    ['1', '1'],
  );
});
