import { FRAME_HEADER_BYTES } from './frame.js';

/** Payloads up to this size are copied next to their header: one write for many frames. */
export const COALESCE_BELOW = 4096;
/** Largest buffer small frames are encoded into; a full one is handed to the socket and replaced. */
const SLAB_BYTES = 64 * 1024;
/**
 * Smallest such buffer, and the first one a session gets. A quiet session (a heartbeat answer
 * now and then) never needs more, and the edge holds thousands of them: a 64 KiB slab each was
 * most of an idle session's memory. A slab that fills quickly is followed by one twice its size.
 */
const FIRST_SLAB_BYTES = 1024;
/** A slab filled within this long is taken as traffic, and the next one grows. */
const BUSY_SLAB_MS = 1000;

/**
 * Encodes a session's outgoing frames for its socket. Small frames (heads, credit, short
 * bodies, ends) are encoded one after another into a shared slab, and each flush hands the
 * socket one view of what accumulated since the last: under load a loop turn's frames of many
 * streams leave as one buffer, where a write per frame cost a Writable.write() call, a buffer
 * and an iovec each (three per small GET on the agent). JSON text is encoded straight into the
 * slab, without a Buffer of its own. Large payloads are never copied: the slab is flushed and
 * the payload written after it by reference.
 *
 * Bytes handed to the socket are never touched again: later frames go after them in the slab.
 */
export class FrameWriter {
  private slab = Buffer.allocUnsafe(FIRST_SLAB_BYTES);
  /** When the current slab was allocated (performance.now()). */
  private slabSince = performance.now();
  /** First byte of the slab not yet handed to the socket. */
  private start = 0;
  /** Next free byte of the slab. */
  private end = 0;

  constructor(private readonly socket: { write(chunk: Buffer): boolean }) {}

  /** Bytes encoded and not yet handed to the socket. */
  get pendingBytes(): number {
    return this.end - this.start;
  }

  /** Queues one frame; `payload` is copied only when small. */
  frame(type: number, flags: number, stream: number, payload?: Buffer): void {
    const length = payload ? payload.length : 0;
    if (payload && length > COALESCE_BELOW) {
      this.header(this.reserve(FRAME_HEADER_BYTES), type, flags, stream, length);
      this.flush();
      this.socket.write(payload);
      return;
    }
    const at = this.reserve(FRAME_HEADER_BYTES + length);
    this.header(at, type, flags, stream, length);
    if (payload) payload.copy(this.slab, at + FRAME_HEADER_BYTES);
  }

  /** Queues one frame whose payload is `text` in UTF-8. */
  textFrame(type: number, flags: number, stream: number, text: string): void {
    const most = text.length * 3; // UTF-8 bytes per UTF-16 code unit, at most
    if (most > COALESCE_BELOW) return this.frame(type, flags, stream, Buffer.from(text));
    const at = this.reserve(FRAME_HEADER_BYTES + most);
    const length = this.slab.write(text, at + FRAME_HEADER_BYTES, most, 'utf8');
    this.header(at, type, flags, stream, length);
    this.end = at + FRAME_HEADER_BYTES + length;
  }

  /** Hands what accumulated to the socket. */
  flush(): void {
    if (this.end === this.start) return;
    this.socket.write(this.slab.subarray(this.start, this.end));
    this.start = this.end;
  }

  /** Room for `bytes` more at the slab's end (a fresh slab when full); returns where they go. */
  private reserve(bytes: number): number {
    if (this.end + bytes > this.slab.length) {
      this.flush();
      const now = performance.now();
      const size = now - this.slabSince < BUSY_SLAB_MS ? Math.min(SLAB_BYTES, this.slab.length * 2) : FIRST_SLAB_BYTES;
      this.slab = Buffer.allocUnsafe(Math.max(size, bytes));
      this.slabSince = now;
      this.start = this.end = 0;
    }
    const at = this.end;
    this.end += bytes;
    return at;
  }

  private header(at: number, type: number, flags: number, stream: number, length: number): void {
    const slab = this.slab;
    slab.writeUInt32BE(length, at);
    slab[at + 4] = type;
    slab[at + 5] = flags;
    slab.writeUInt32BE(stream, at + 6);
  }
}
