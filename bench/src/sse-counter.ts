/**
 * Counts the events of a `text/event-stream` body fed in pieces as they arrive: `request`
 * events, and the records that `dropped` events say were missed. It looks for the event names
 * in the text instead of parsing every event, so that the benchmark's subscriber, which shares
 * the machine's cores with the processes it measures, spends as little as it can per record.
 * A name split between two pieces is counted once; so is a `dropped` event split anywhere.
 */
export class SseEventCounter {
  events = 0;
  dropped = 0;
  private carry = '';

  feed(piece: string): void {
    const text = this.carry + piece;
    for (let at = text.indexOf(REQUEST); at >= 0; at = text.indexOf(REQUEST, at + REQUEST.length)) this.events++;
    let searchFrom = 0;
    let unfinished = -1;
    for (let at = text.indexOf(DROPPED); at >= 0; at = text.indexOf(DROPPED, searchFrom)) {
      const end = text.indexOf('\n\n', at);
      if (end < 0) {
        unfinished = at;
        break;
      }
      this.dropped += droppedCount(text.slice(at + DROPPED.length, end));
      searchFrom = end + 2;
    }
    // Kept for the next piece: an unfinished `dropped` event whole, else the tail that could
    // begin an event name (shorter than a whole one, so no name is counted twice).
    this.carry = unfinished >= 0 ? text.slice(unfinished) : text.slice(Math.max(searchFrom, text.length - (REQUEST.length - 1)));
  }
}

const REQUEST = 'event: request\n';
const DROPPED = 'event: dropped\n';

/** The count of a `dropped` event's lines after its name (`data: {"dropped":n,…}`). */
function droppedCount(lines: string): number {
  const data = lines.split('\n').find((line) => line.startsWith('data: '));
  if (data === undefined) throw new Error(`a dropped event without data: ${JSON.stringify(lines)}`);
  const { dropped } = JSON.parse(data.slice('data: '.length)) as { dropped?: unknown };
  if (typeof dropped !== 'number') throw new Error(`a dropped event without a count: ${data}`);
  return dropped;
}
