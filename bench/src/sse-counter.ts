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
    this.carry = unfinished >= 0 ? text.slice(unfinished) : text.slice(Math.max(searchFrom, text.length - TAIL));
  }

  /**
   * As feed, for bytes as they were read: the names are searched in the bytes themselves, so
   * no string of the whole piece is made. Only the seam with the previous piece is text. A
   * piece with a `dropped` event, or after one that is unfinished, goes the text way.
   */
  feedBytes(piece: Buffer): void {
    if (piece.length < SHORT_PIECE || this.carry.length > TAIL || piece.indexOf(DROPPED_BYTES) >= 0) {
      this.feed(piece.toString('latin1'));
      return;
    }
    const seam = this.carry + piece.toString('latin1', 0, TAIL);
    if (seam.includes(DROPPED)) {
      this.feed(piece.toString('latin1'));
      return;
    }
    // A name that begins in the carry and ends in this piece; one wholly in the piece is counted below.
    const straddling = seam.indexOf(REQUEST);
    if (straddling >= 0 && straddling < this.carry.length) this.events++;
    for (let at = piece.indexOf(REQUEST_BYTES); at >= 0; at = piece.indexOf(REQUEST_BYTES, at + REQUEST_BYTES.length)) this.events++;
    this.carry = piece.toString('latin1', piece.length - TAIL);
  }
}

const REQUEST = 'event: request\n';
const DROPPED = 'event: dropped\n';
const REQUEST_BYTES = Buffer.from(REQUEST, 'latin1');
const DROPPED_BYTES = Buffer.from(DROPPED, 'latin1');
/** The most a carry holds when no `dropped` event is unfinished: less than a whole name. */
const TAIL = REQUEST.length - 1;
/** Pieces shorter than this go the text way: the carry then spans more than the seam. */
const SHORT_PIECE = 4 * REQUEST.length;

/** The count of a `dropped` event's lines after its name (`data: {"dropped":n,…}`). */
function droppedCount(lines: string): number {
  const data = lines.split('\n').find((line) => line.startsWith('data: '));
  if (data === undefined) throw new Error(`a dropped event without data: ${JSON.stringify(lines)}`);
  const { dropped } = JSON.parse(data.slice('data: '.length)) as { dropped?: unknown };
  if (typeof dropped !== 'number') throw new Error(`a dropped event without a count: ${data}`);
  return dropped;
}
