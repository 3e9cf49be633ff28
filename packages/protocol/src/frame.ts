/**
 * Frame layout on the session socket (big-endian), 10-byte header then payload:
 *
 *   | length u32 | type u8 | flags u8 | stream u32 | payload (length bytes) |
 *
 * Stream 0 is the session itself (control messages, pings). Streams opened by
 * the dialling side (the agent) are odd, streams opened by the accepting side
 * (the edge) are even, so neither side ever has to coordinate ids.
 */

/** Bytes in a frame header. */
export const FRAME_HEADER_BYTES = 10;
/** Largest payload one frame may carry; a peer announcing more is a protocol error. */
export const MAX_FRAME_PAYLOAD = 4 * 1024 * 1024;
/** Largest DATA payload we send; bigger writes are split so streams interleave fairly. */
export const MAX_DATA_CHUNK = 256 * 1024;

/** Frame types. One job each; see packages/protocol/README.md for the one-screen summary. */
export const FrameType = {
  /** JSON control message on stream 0 (bind, bound, released, error…). */
  CONTROL: 0,
  /** Opens a stream; payload is the JSON open metadata (e.g. the request head). */
  OPEN: 1,
  /** The reply head of a stream (e.g. the response head), JSON, at most once. */
  HEADERS: 2,
  /** Stream bytes. */
  DATA: 3,
  /** Abort the stream; payload is a UTF-8 error code. No further frames follow. */
  RESET: 4,
  /** Flow-control credit: payload u32 number of bytes the sender may send more. */
  WINDOW: 5,
  /** Liveness probe on stream 0; payload 8 opaque bytes echoed back with FLAG_ACK. */
  PING: 6,
  /** Orderly session shutdown: no new streams; payload UTF-8 reason. */
  GOAWAY: 7,
  /**
   * An informational (1xx) reply head before HEADERS, JSON like HEADERS; zero or more. Sent only
   * to a peer that announced it understands it (see `Feature`): an older one closes the session.
   */
  INFO: 8,
  /**
   * Trailer fields after a stream's body, JSON flat pairs; ends the sender's side (FLAG_END is
   * set and implied). Sent only to a peer that announced the `trailers` feature.
   */
  TRAILERS: 9,
} as const;
export type FrameTypeValue = (typeof FrameType)[keyof typeof FrameType];

/** The sender half-closes the stream after this frame (OPEN, HEADERS, DATA; TRAILERS always). */
export const FLAG_END = 0x1;
/** On PING: this is the answer. */
export const FLAG_ACK = 0x2;

/**
 * One decoded frame. `payload` is a view into the chunk it arrived in (socket chunks are fresh
 * buffers, never reused, so it may be kept; StreamDuplex pushes DATA payloads as they are).
 * Keeping a small view pins its whole chunk; copy if you keep many small payloads for long.
 */
export interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

/** Encodes a frame header into a fresh buffer. */
export function encodeHeader(type: number, flags: number, stream: number, length: number): Buffer {
  const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  header.writeUInt32BE(length, 0);
  header[4] = type;
  header[5] = flags;
  header.writeUInt32BE(stream, 6);
  return header;
}

/** Encodes a whole frame (header + payload) into one buffer; for small payloads. */
export function encodeFrame(type: number, flags: number, stream: number, payload?: Buffer): Buffer {
  const length = payload ? payload.length : 0;
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32BE(length, 0);
  frame[4] = type;
  frame[5] = flags;
  frame.writeUInt32BE(stream, 6);
  if (payload) payload.copy(frame, FRAME_HEADER_BYTES);
  return frame;
}

/** Raised for a peer that violates the framing; the session must be closed. */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

/** Options of FrameDecoder. */
export interface FrameDecoderOptions {
  /**
   * Deliver DATA payloads piece by piece as they arrive (default false: whole frames). A frame
   * that straddles socket reads then costs no copy and no wait for its last byte; FLAG_END is
   * set on its last piece only. Other frame types are always delivered whole.
   */
  streamData?: boolean;
}

const EMPTY = Buffer.alloc(0);

/**
 * Incremental frame decoder. Feed it socket chunks of any size (down to one byte);
 * it calls `onFrame` once per complete frame, in order. Whole frames that sit inside
 * one chunk are delivered as zero-copy views; only frames that straddle chunks are copied
 * (or, with `streamData`, DATA frames are delivered as views of each chunk's share).
 */
export class FrameDecoder {
  private readonly streamData: boolean;
  /** A header split across chunks is gathered here (at most 9 bytes copied per frame). */
  private readonly header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  private headerFill = 0;
  /** The frame whose payload is being read: -1 while between frames (reading a header). */
  private left = -1;
  private type = 0;
  private flags = 0;
  private stream = 0;
  private streaming = false;
  /** Pieces of a payload to be delivered whole, kept as a list so it is copied once, not per chunk. */
  private held: Buffer[] = [];
  private heldBytes = 0;

  constructor(
    private readonly onFrame: (frame: Frame) => void,
    options: FrameDecoderOptions = {},
  ) {
    this.streamData = options.streamData ?? false;
  }

  /** Consumes one chunk from the socket. Throws ProtocolError on an oversized frame. */
  push(chunk: Buffer): void {
    let offset = 0;
    const total = chunk.length;
    while (offset < total) {
      if (this.left < 0) {
        // Between frames: read a header, in place when the chunk holds all of it.
        let length: number;
        if (this.headerFill === 0 && total - offset >= FRAME_HEADER_BYTES) {
          length = checkedLength(chunk.readUInt32BE(offset));
          this.type = chunk[offset + 4]!;
          this.flags = chunk[offset + 5]!;
          this.stream = chunk.readUInt32BE(offset + 6);
          offset += FRAME_HEADER_BYTES;
        } else {
          const take = Math.min(FRAME_HEADER_BYTES - this.headerFill, total - offset);
          chunk.copy(this.header, this.headerFill, offset, offset + take);
          this.headerFill += take;
          offset += take;
          if (this.headerFill < FRAME_HEADER_BYTES) return;
          this.headerFill = 0;
          length = checkedLength(this.header.readUInt32BE(0));
          this.type = this.header[4]!;
          this.flags = this.header[5]!;
          this.stream = this.header.readUInt32BE(6);
        }
        if (length === 0) {
          this.onFrame({ type: this.type, flags: this.flags, stream: this.stream, payload: EMPTY });
          continue;
        }
        this.left = length;
        this.streaming = this.streamData && this.type === FrameType.DATA;
        continue;
      }
      const available = total - offset;
      if (this.streaming) {
        const n = Math.min(this.left, available);
        this.left -= n;
        const last = this.left === 0;
        if (last) this.left = -1;
        const flags = last ? this.flags : this.flags & ~FLAG_END;
        this.onFrame({ type: this.type, flags, stream: this.stream, payload: chunk.subarray(offset, offset + n) });
        offset += n;
      } else if (this.heldBytes === 0 && available >= this.left) {
        const end = offset + this.left;
        this.left = -1;
        this.onFrame({ type: this.type, flags: this.flags, stream: this.stream, payload: chunk.subarray(offset, end) });
        offset = end;
      } else {
        const n = Math.min(this.left - this.heldBytes, available);
        this.held.push(chunk.subarray(offset, offset + n));
        this.heldBytes += n;
        offset += n;
        if (this.heldBytes < this.left) return;
        const payload = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held, this.heldBytes);
        this.held = [];
        this.heldBytes = 0;
        this.left = -1;
        this.onFrame({ type: this.type, flags: this.flags, stream: this.stream, payload });
      }
    }
  }

  /** Bytes of an incomplete frame held back, waiting for the rest. */
  get bufferedBytes(): number {
    if (this.headerFill > 0) return this.headerFill;
    if (this.left < 0 || this.streaming) return 0;
    return FRAME_HEADER_BYTES + this.heldBytes;
  }
}

/**
 * JSON metadata as the text of a frame payload (`undefined` travels as `null`); throws
 * ProtocolError when its UTF-8 would not fit a frame.
 */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  if (text.length * 3 > MAX_FRAME_PAYLOAD && Buffer.byteLength(text) > MAX_FRAME_PAYLOAD) {
    throw new ProtocolError(`JSON payload of ${Buffer.byteLength(text)} bytes exceeds the limit`);
  }
  return text;
}

/** Decodes a JSON payload from the peer; malformed JSON is a ProtocolError. */
export function decodeJson(payload: Buffer): unknown {
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch {
    throw new ProtocolError('malformed JSON in frame');
  }
}

function checkedLength(length: number): number {
  if (length > MAX_FRAME_PAYLOAD) throw new ProtocolError(`frame of ${length} bytes exceeds the limit`);
  return length;
}
