import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseEventCounter } from './sse-counter.js';

const request = (id: number): string => `event: request\nid: r${id}\ndata: {"id":"r${id}","path":"/event: reques"}\n\n`;
const dropped = (count: number): string =>
  `event: dropped\ndata: ${JSON.stringify({ dropped: count, message: `${count} request records were not sent` })}\n\n`;

type Way = 'text' | 'bytes' | 'both';

/**
 * Feeds `text` cut at every position in `cuts` and returns the counts: as text, as bytes, or
 * the two in turn (the subscriber reads bytes; a piece can go either way).
 */
function counted(text: string, cuts: number[], way: Way = 'text'): { events: number; dropped: number } {
  const counter = new SseEventCounter();
  let from = 0;
  for (const [i, cut] of [...cuts, text.length].entries()) {
    const piece = text.slice(from, cut);
    if (way === 'text' || (way === 'both' && i % 2 === 0)) counter.feed(piece);
    else counter.feedBytes(Buffer.from(piece, 'latin1'));
    from = cut;
  }
  return { events: counter.events, dropped: counter.dropped };
}

const WAYS: Way[] = ['text', 'bytes', 'both'];

describe('SseEventCounter', () => {
  const body = `: stream open\n\n${request(1)}${request(2)}${dropped(7)}${request(3)}: keep-alive\n\n${dropped(1)}`;

  it('counts request events and the records dropped events report, in one piece', () => {
    assert.deepEqual(counted(body, []), { events: 3, dropped: 8 });
  });

  it('counts the same whatever the text is cut into: every single cut and every pair of cuts, as text or bytes', () => {
    assertCountedWhereverCut(body, { events: 3, dropped: 8 }, 7);
  });

  it('counts long pieces of request events alone by their bytes, cut anywhere', () => {
    const many = `: stream open\n\n${Array.from({ length: 12 }, (_, i) => request(i)).join('')}`;
    assertCountedWhereverCut(many, { events: 12, dropped: 0 }, 11);
  });

  it('counts byte by byte', () => {
    for (const way of WAYS) {
      assert.deepEqual(
        counted(
          body,
          Array.from({ length: body.length }, (_, i) => i),
          way,
        ),
        { events: 3, dropped: 8 },
      );
    }
  });

  it('refuses a dropped event without a count', () => {
    assert.throws(() => new SseEventCounter().feed('event: dropped\ndata: {}\n\n'), /without a count/);
    assert.throws(() => new SseEventCounter().feed('event: dropped\nid: 1\n\n'), /without data/);
  });
});

/** `text` counts as `expected` cut once anywhere, and cut twice (the second cut every `step` characters after the first), each way. */
function assertCountedWhereverCut(text: string, expected: { events: number; dropped: number }, step: number): void {
  for (const way of WAYS) {
    for (let a = 0; a <= text.length; a++) {
      assert.deepEqual(counted(text, [a], way), expected, `${way}, cut at ${a}`);
      for (let b = a; b <= text.length; b += step) assert.deepEqual(counted(text, [a, b], way), expected, `${way}, cuts at ${a}, ${b}`);
    }
  }
}
