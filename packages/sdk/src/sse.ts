/** One dispatched Server-Sent Event. */
export interface SseEvent {
  /** The `event:` field; `message` when the event named none. */
  event: string;
  /** The `data:` lines joined with newlines. */
  data: string;
  /** The last `id:` seen on the stream so far (it carries over to later events), or ''. */
  id: string;
}

/**
 * Parses a `text/event-stream` body as the HTML standard's event-stream rules say: lines end
 * in CRLF, LF or CR (even split across chunks), a leading BOM is dropped, `:` lines are
 * comments (keep-alives), a field's value loses one leading space, `data` lines accumulate,
 * a blank line dispatches, and an event with no data is not dispatched. The SDK carries no
 * runtime dependencies, so these few rules are kept here rather than pulled in.
 */
export async function* parseSse(chunks: AsyncIterable<string>): AsyncGenerator<SseEvent> {
  const state = new EventBuilder();
  let buffer = '';
  let first = true;
  for await (const chunk of chunks) {
    buffer += chunk;
    if (first && buffer.length > 0) {
      if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
      first = false;
    }
    buffer = yield* takeLines(buffer, state, false);
  }
  yield* takeLines(buffer, state, true);
  // A final event without its blank line is incomplete and, by the same rules, dropped.
}

/** Feeds every complete line of `buffer` to `state`; answers the incomplete rest. */
function* takeLines(buffer: string, state: EventBuilder, ended: boolean): Generator<SseEvent, string> {
  for (;;) {
    const end = buffer.search(/[\r\n]/);
    // A CR at the very end may be the first half of a CRLF still in flight.
    if (end < 0 || (!ended && buffer[end] === '\r' && end === buffer.length - 1)) return buffer;
    const event = state.line(buffer.slice(0, end));
    buffer = buffer.slice(end + (buffer[end] === '\r' && buffer[end + 1] === '\n' ? 2 : 1));
    if (event) yield event;
  }
}

/** The fields of the event being read. */
class EventBuilder {
  private event = '';
  private data: string[] = [];
  private lastId = '';

  /** Takes one line; answers the event a blank line dispatches. */
  line(line: string): SseEvent | undefined {
    if (line === '') {
      const event = this.data.length > 0 ? { event: this.event || 'message', data: this.data.join('\n'), id: this.lastId } : undefined;
      this.event = '';
      this.data = [];
      return event;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    // `retry` and unknown fields are ignored: the SDK does not reconnect on its own.
    return undefined;
  }
}
