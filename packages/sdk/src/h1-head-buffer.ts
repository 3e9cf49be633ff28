import { ResponseParseError } from './h1-response-head.js';

/** Largest response head (status line + headers) we accept, and the most trailer bytes we read. */
export const MAX_HEAD_BYTES = 64 * 1024;

const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');

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
