import type { ResponseHeadInfo } from './h1-response-head.js';

/** Longest head kept for comparison; longer ones are read every time. */
const MAX_MEMO_HEAD_BYTES = 1024;
/** Smallest comparison buffer, so heads that grow by a few bytes do not each allocate one. */
const MIN_MEMO_BUFFER_BYTES = 256;

/**
 * A final response head read once and handed out again for each later response whose head
 * repeats it byte for byte. Its `info.headers` array is shared by all of those responses: a
 * reader must copy it before editing it. `encoded` is a slot for what a user derives from
 * the head alone (the exchange puts the session's HEADERS text there).
 */
export class SharedHead {
  encoded: string | undefined = undefined;

  constructor(readonly info: ResponseHeadInfo) {}
}

/**
 * The last final head one connection's origin sent. An origin tends to repeat its head
 * exactly (the same headers, a Date that changes once a second), and reading it (a latin1
 * string, a strict pass over every line, a string per name and value) and encoding it for the
 * session again cost more per request than comparing its bytes with the last one's. A head
 * that differs replaces the memo; the comparison is one native call over a buffer reused for
 * the connection's life.
 */
export class HeadMemo {
  private bytes: Buffer | undefined;
  private length = 0;
  private head: SharedHead | undefined;

  /** The remembered head when chunk[start, end) is the same bytes; else undefined. */
  match(chunk: Buffer, start: number, end: number): SharedHead | undefined {
    const bytes = this.bytes;
    if (bytes === undefined || this.head === undefined || end - start !== this.length) return undefined;
    return chunk.compare(bytes, 0, this.length, start, end) === 0 ? this.head : undefined;
  }

  /** Remembers chunk[start, end), read as `info`; returns it shared, or undefined when too long to keep. */
  remember(chunk: Buffer, start: number, end: number, info: ResponseHeadInfo): SharedHead | undefined {
    const length = end - start;
    if (length > MAX_MEMO_HEAD_BYTES) {
      this.head = undefined;
      return undefined;
    }
    if (this.bytes === undefined || this.bytes.length < length) {
      // Not from Buffer's shared pool: this buffer lives as long as the connection.
      this.bytes = Buffer.allocUnsafeSlow(Math.max(length, MIN_MEMO_BUFFER_BYTES));
    }
    chunk.copy(this.bytes, 0, start, end);
    this.length = length;
    this.head = new SharedHead(info);
    return this.head;
  }

  /** Forgets the head (the connection is closing; nothing to compare with any more). */
  clear(): void {
    this.head = undefined;
    this.bytes = undefined;
    this.length = 0;
  }
}
