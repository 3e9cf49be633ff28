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
} as const;
export type FrameTypeValue = (typeof FrameType)[keyof typeof FrameType];

/** The sender half-closes the stream after this frame (OPEN, HEADERS, DATA). */
export const FLAG_END = 0x1;
/** On PING: this is the answer. */
export const FLAG_ACK = 0x2;

/**
 * One decoded frame. `payload` is a view into the chunk it arrived in (socket chunks are fresh
 * buffers, never reused, so it may be kept; MuxStream pushes DATA payloads as they are).
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

/**
 * Incremental frame decoder. Feed it socket chunks of any size (down to one byte);
 * it calls `onFrame` once per complete frame, in order. Whole frames that sit inside
 * one chunk are delivered as zero-copy views; only frames that straddle chunks are copied.
 */
export class FrameDecoder {
  /** Chunks of an incomplete frame, kept as a list so a large frame is copied once, not per chunk. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Total bytes (header + payload) the held frame needs, once its header is known. */
  private heldNeed = 0;

  constructor(private readonly onFrame: (frame: Frame) => void) {}

  /** Consumes one chunk from the socket. Throws ProtocolError on an oversized frame. */
  push(chunk: Buffer): void {
    let buffer = chunk;
    if (this.heldBytes > 0) {
      this.held.push(chunk);
      this.heldBytes += chunk.length;
      if (this.heldNeed === 0 && this.heldBytes >= FRAME_HEADER_BYTES) {
        const head = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held);
        this.heldNeed = FRAME_HEADER_BYTES + checkedLength(head.readUInt32BE(0));
      }
      if (this.heldNeed === 0 || this.heldBytes < this.heldNeed) return;
      buffer = Buffer.concat(this.held, this.heldBytes);
      this.held = [];
      this.heldBytes = 0;
      this.heldNeed = 0;
    }
    let offset = 0;
    const total = buffer.length;
    while (total - offset >= FRAME_HEADER_BYTES) {
      const length = checkedLength(buffer.readUInt32BE(offset));
      const end = offset + FRAME_HEADER_BYTES + length;
      if (end > total) {
        this.heldNeed = end - offset;
        break;
      }
      this.onFrame({
        type: buffer[offset + 4]!,
        flags: buffer[offset + 5]!,
        stream: buffer.readUInt32BE(offset + 6),
        payload: buffer.subarray(offset + FRAME_HEADER_BYTES, end),
      });
      offset = end;
    }
    if (offset < total) {
      const rest = buffer.subarray(offset);
      this.held = [rest];
      this.heldBytes = rest.length;
    }
  }

  /** Bytes of an incomplete frame held back, waiting for the rest. */
  get bufferedBytes(): number {
    return this.heldBytes;
  }
}

/** Encodes JSON metadata as a frame payload (`undefined` travels as `null`); throws if it cannot fit a frame. */
export function encodeJson(value: unknown): Buffer {
  const payload = Buffer.from(JSON.stringify(value ?? null));
  if (payload.length > MAX_FRAME_PAYLOAD) throw new ProtocolError(`JSON payload of ${payload.length} bytes exceeds the limit`);
  return payload;
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
