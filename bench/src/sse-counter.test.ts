import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseEventCounter } from './sse-counter.js';

const request = (id: number): string => `event: request\nid: r${id}\ndata: {"id":"r${id}","path":"/event: reques"}\n\n`;
const dropped = (count: number): string =>
  `event: dropped\ndata: ${JSON.stringify({ dropped: count, message: `${count} request records were not sent` })}\n\n`;

/** Feeds `text` cut at every position in `cuts` and returns the counts. */
function counted(text: string, cuts: number[]): { events: number; dropped: number } {
  const counter = new SseEventCounter();
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    counter.feed(text.slice(from, cut));
    from = cut;
  }
  return { events: counter.events, dropped: counter.dropped };
}

describe('SseEventCounter', () => {
  const body = `: stream open\n\n${request(1)}${request(2)}${dropped(7)}${request(3)}: keep-alive\n\n${dropped(1)}`;

  it('counts request events and the records dropped events report, in one piece', () => {
    assert.deepEqual(counted(body, []), { events: 3, dropped: 8 });
  });

  it('counts the same whatever the text is cut into: every single cut and every pair of cuts', () => {
    for (let a = 0; a <= body.length; a++) {
      assert.deepEqual(counted(body, [a]), { events: 3, dropped: 8 }, `cut at ${a}`);
      for (let b = a; b <= body.length; b += 7) assert.deepEqual(counted(body, [a, b]), { events: 3, dropped: 8 }, `cuts at ${a}, ${b}`);
    }
  });

  it('counts byte by byte', () => {
    assert.deepEqual(
      counted(
        body,
        Array.from({ length: body.length }, (_, i) => i),
      ),
      { events: 3, dropped: 8 },
    );
  });

  it('refuses a dropped event without a count', () => {
    assert.throws(() => new SseEventCounter().feed('event: dropped\ndata: {}\n\n'), /without a count/);
    assert.throws(() => new SseEventCounter().feed('event: dropped\nid: 1\n\n'), /without data/);
  });
});
