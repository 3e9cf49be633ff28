import { ResponseParseError } from './h1-response-head.js';

/** Largest response head (status line + headers) we accept, and the most trailer bytes we read. */
export const MAX_HEAD_BYTES = 64 * 1024;

const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
const LF = 0x0a;
/** A line ended by a bare LF, then a CRLF blank line (a head cannot start with LF either). */
const BARE_LF_BEFORE_BLANK_LINE = /(?:^|[^\r])\n\r\n/;

/**
 * Finds the end of a response head (the blank line) in bytes that may arrive split anywhere,
 * holding the partial head meanwhile. The usual head arrives in one chunk: one native
 * indexOf, no copy. Only a split head is ever concatenated, once, when it is complete.
 */
export class HeadBuffer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  /** Whether bytes of a head split across chunks are held (then `take` joins them). */
  get holding(): boolean {
    return this.pending.length > 0;
  }

  /** Forgets any held bytes. */
  clear(): void {
    this.pending.length = 0;
    this.pendingBytes = 0;
  }

  /**
   * Looks for the end of the head in chunk[offset..]. Returns the offset just past the blank
   * line, or -1 after holding the bytes for the next chunk. Throws once the head is too large.
   */
  scan(chunk: Buffer, offset: number): number {
    const end = this.findEnd(chunk, offset);
    if (end < 0) {
      if (this.endsBareLfHead(chunk, offset)) throw new ResponseParseError('response head ended by a bare LF instead of CRLF');
      this.pendingBytes += chunk.length - offset;
      if (this.pendingBytes > MAX_HEAD_BYTES) throw new ResponseParseError('response head too large');
      this.pending.push(offset === 0 ? chunk : chunk.subarray(offset));
      return -1;
    }
    if (this.pendingBytes + end - offset > MAX_HEAD_BYTES) throw new ResponseParseError('response head too large');
    return end;
  }

  /**
   * The whole head as a latin1 string (one char per byte), without the blank line: the held
   * bytes plus chunk[offset, end), where `end` came from `scan`. Clears the held bytes.
   */
  take(chunk: Buffer, offset: number, end: number): string {
    if (this.pending.length === 0) return chunk.toString('latin1', offset, end - 4);
    this.pending.push(chunk.subarray(offset, end));
    const head = Buffer.concat(this.pending);
    this.clear();
    return head.toString('latin1', 0, head.length - 4);
  }

  /** Offset just past the CRLFCRLF, which may straddle the held bytes and this chunk; or -1. */
  private findEnd(chunk: Buffer, offset: number): number {
    if (this.pendingBytes > 0) {
      // The held bytes may end with the first k bytes of the terminator; then the other 4 - k
      // must open this chunk.
      for (let k = 3; k > 0; k--) {
        const need = 4 - k;
        if (chunk.length - offset < need || !this.pendingEndsWith(k)) continue;
        let j = 0;
        while (j < need && chunk[offset + j] === CRLF_CRLF[k + j]) j++;
        if (j === need) return offset + need;
      }
    }
    const at = chunk.indexOf(CRLF_CRLF, offset);
    return at < 0 ? -1 : at + 4;
  }

  /**
   * Whether chunk[offset..], after the held bytes, has a blank line written with a bare LF
   * (`\n\n`, `\r\n\n`, `x\n\r\n`): the origin has ended its head, with line endings that are
   * not HTTP's, and the CRLFCRLF waited for will never come. Refused now, as Node's parser does,
   * rather than holding the request until the origin closes, if it ever does. Only heads still
   * incomplete are checked; a complete one with a bare LF fails readHead.
   */
  private endsBareLfHead(chunk: Buffer, offset: number): boolean {
    if (chunk.indexOf(LF, offset) < 0) return false;
    const text = this.heldTail(3) + chunk.toString('latin1', offset);
    return text.includes('\n\n') || BARE_LF_BEFORE_BLANK_LINE.test(text);
  }

  /** The last `n` held bytes (fewer when fewer are held), as latin1. */
  private heldTail(n: number): string {
    let tail = '';
    for (let index = this.pending.length - 1; index >= 0 && tail.length < n; index--) {
      const piece = this.pending[index]!;
      tail = piece.toString('latin1', Math.max(0, piece.length - (n - tail.length))) + tail;
    }
    return tail;
  }

  /** Whether the held bytes end with the first `k` bytes of CRLFCRLF. */
  private pendingEndsWith(k: number): boolean {
    if (this.pendingBytes < k) return false;
    let index = this.pending.length - 1;
    let piece = this.pending[index]!;
    let at = piece.length;
    for (let j = k - 1; j >= 0; j--) {
      while (at === 0) {
        piece = this.pending[--index]!;
        at = piece.length;
      }
      if (piece[--at] !== CRLF_CRLF[j]) return false;
    }
    return true;
  }
}
