/** Bytes a chunk holds at least. */
const MIN_CHUNK_BYTES = 64 * 1024;
/** The most UTF-8 bytes one UTF-16 code unit can take. */
const MAX_BYTES_PER_UNIT = 3;

/**
 * Text waiting to be written, kept as UTF-8 bytes outside the JS heap. A stream that gathers
 * events for a while would otherwise hold every event's string across the young generation's
 * collections, which copy what is alive each time: one buffer is a small object to them,
 * and each event's string dies as soon as its bytes are copied here.
 */
export class PendingBytes {
  private readonly full: Buffer[] = [];
  private chunk: Buffer | undefined;
  private used = 0;
  /** Sized from the last take, so that a steady stream fills one chunk per write. */
  private nextChunkBytes = MIN_CHUNK_BYTES;

  get empty(): boolean {
    return this.used === 0 && this.full.length === 0;
  }

  append(text: string): void {
    const most = text.length * MAX_BYTES_PER_UNIT;
    if (this.chunk === undefined || this.chunk.length - this.used < most) {
      if (this.chunk !== undefined && this.used > 0) this.full.push(this.chunk.subarray(0, this.used));
      this.chunk = Buffer.allocUnsafeSlow(Math.max(this.nextChunkBytes, most));
      this.used = 0;
    }
    this.used += this.chunk.write(text, this.used);
  }

  /** Everything appended since the last take, in one buffer (undefined when empty); the chunk is not reused after. */
  take(): Buffer | undefined {
    if (this.empty) return undefined;
    const last = this.chunk!.subarray(0, this.used);
    const bytes = this.full.length === 0 ? last : Buffer.concat([...this.full, last]);
    this.clear();
    this.nextChunkBytes = Math.max(MIN_CHUNK_BYTES, Math.ceil(bytes.length * 1.25));
    return bytes;
  }

  clear(): void {
    this.full.length = 0;
    this.chunk = undefined;
    this.used = 0;
  }
}
