/**
 * Test-only: a seeded mutator for the wire protocol and the two targets it drives, the frame
 * decoder alone and a whole Mux (decoder plus session state machine) fed as if from a socket.
 * Not exported from index.ts. The fuzz test replays the kept corpus, then mutates for as many
 * iterations as SVC_FUZZ_ITERATIONS asks.
 */
import { Duplex } from 'node:stream';
import { FLAG_END, FrameDecoder, FrameType, MAX_FRAME_PAYLOAD, ProtocolError, encodeFrame, type Frame } from './frame.js';
import { Mux } from './mux.js';
import { trailerFields } from './headers.js';
import type { StreamDuplex } from './stream-duplex.js';
import { duplexes, prng } from './test-support.js';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/** Valid conversations an agent could send an edge (acceptor side), the starting points of mutation. */
export const SEED_INPUTS: readonly Buffer[] = [
  Buffer.concat([
    encodeFrame(FrameType.CONTROL, 0, 0, json({ type: 'bind', requestId: 1, subdomain: 'a', local: 'localhost:3000' })),
    encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(8, 1)),
    encodeFrame(FrameType.OPEN, 0, 2, json({ m: 'GET', p: '/', h: ['host', 'a'], t: 'tun_1' })),
    encodeFrame(FrameType.INFO, 0, 2, json({ s: 103, h: ['link', '</a.css>; rel=preload'] })),
    encodeFrame(FrameType.HEADERS, 0, 2, json({ s: 200, h: ['content-type', 'text/plain'] })),
    encodeFrame(FrameType.DATA, 0, 2, Buffer.from('hello')),
    encodeFrame(FrameType.WINDOW, 0, 2, u32(65536)),
    encodeFrame(FrameType.DATA, FLAG_END, 2, Buffer.from('!')),
  ]),
  Buffer.concat([
    encodeFrame(FrameType.OPEN, FLAG_END, 4, json({ m: 'POST', p: '/x', h: [], t: 't', b: 1 })),
    encodeFrame(FrameType.RESET, 0, 4, Buffer.from('CANCEL')),
    encodeFrame(FrameType.WINDOW, 0, 4, u32(1)),
    encodeFrame(FrameType.GOAWAY, 0, 0, Buffer.from('agent closing')),
  ]),
  Buffer.concat([
    encodeFrame(FrameType.OPEN, 0, 6, json({ m: 'GET', p: '/ws', h: [], t: 't', u: 1 })),
    encodeFrame(FrameType.HEADERS, FLAG_END, 6, json({ s: 101, h: ['upgrade', 'websocket'] })),
    encodeFrame(FrameType.PING, 2, 0, Buffer.alloc(8)),
    encodeFrame(FrameType.CONTROL, 0, 0, json({ type: 'unbind', tunnelId: 'tun_1' })),
  ]),
  Buffer.concat([
    encodeFrame(FrameType.OPEN, 0, 1, json({ m: 'POST', p: '/grpc', h: ['content-type', 'application/grpc'], t: 't', b: 1 })),
    encodeFrame(FrameType.DATA, 0, 1, Buffer.from('\0\0\0\0\x02{}')),
    encodeFrame(FrameType.TRAILERS, FLAG_END, 1, json(['x-sum', '3', 'Bad Name', 'v', 'x-ctl', 'a\r\nb'])),
    encodeFrame(FrameType.TRAILERS, FLAG_END, 1, json({ not: 'a list' })),
  ]),
];

/** Byte values that sit on boundaries: zero, sign bits, all ones, the frame types. */
const INTERESTING = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0x7f, 0x80, 0xfe, 0xff];

/** One mutation of `input` (bit flips, boundary bytes, cuts, duplicated or spliced slices). */
export function mutate(input: Buffer, random: () => number, others: readonly Buffer[]): Buffer {
  const pick = (n: number): number => Math.floor(random() * n);
  let out = Buffer.from(input);
  const rounds = 1 + pick(4);
  for (let round = 0; round < rounds; round++) {
    if (out.length === 0) out = Buffer.from([pick(256)]);
    const at = pick(out.length);
    switch (pick(7)) {
      case 0:
        out[at] = out[at]! ^ (1 << pick(8));
        break;
      case 1:
        out[at] = INTERESTING[pick(INTERESTING.length)]!;
        break;
      case 2:
        out = out.subarray(0, at);
        break;
      case 3: {
        const end = Math.min(out.length, at + 1 + pick(32));
        out = Buffer.concat([out.subarray(0, end), out.subarray(at, end), out.subarray(end)]);
        break;
      }
      case 4: {
        const other = others[pick(others.length)]!;
        const from = pick(other.length + 1);
        out = Buffer.concat([out.subarray(0, at), other.subarray(from, from + 1 + pick(64))]);
        break;
      }
      case 5: {
        const random4 = Buffer.from([pick(256), pick(256), pick(256), pick(256)]);
        out = Buffer.concat([out.subarray(0, at), random4, out.subarray(at)]);
        break;
      }
      default:
        out = Buffer.concat([out.subarray(0, at), out.subarray(at + 1 + pick(8))]);
    }
  }
  return out;
}

/** Splits `input` into socket reads of 1..`maxPiece` bytes, so frames straddle reads. */
function* pieces(input: Buffer, random: () => number, maxPiece = 64): Generator<Buffer> {
  for (let offset = 0; offset < input.length;) {
    const size = 1 + Math.floor(random() * maxPiece);
    yield input.subarray(offset, offset + size);
    offset += size;
  }
}

/** What one input did to the decoder: the frame types seen and how it ended. */
export interface DecodeOutcome {
  frames: Frame[];
  error: string | undefined;
}

/**
 * Feeds `input` to a FrameDecoder in random pieces. Only ProtocolError may come out; any other
 * exception propagates to the caller (a finding). Each delivered payload is within the bound.
 */
export function decodeTarget(input: Buffer, seed: number): DecodeOutcome {
  const frames: Frame[] = [];
  const decoder = new FrameDecoder(
    (frame) => {
      if (frame.payload.length > MAX_FRAME_PAYLOAD) throw new Error(`frame payload of ${frame.payload.length} bytes delivered`);
      frames.push(frame);
    },
    { streamData: seed % 2 === 0 },
  );
  try {
    for (const piece of pieces(input, prng(seed))) decoder.push(piece);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return { frames, error: error.message.replace(/\d+/g, 'N') };
  }
  return { frames, error: undefined };
}

/** The socket a fuzzed Mux sits on: reads are injected, writes only counted. */
class FuzzSocket extends Duplex {
  written = 0;
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.written += chunk.length;
    callback();
  }
}

/** What one input did to a Mux. */
export interface SessionOutcome {
  /** How the session ended: undefined when it was still open after the input. */
  closedWith: string | undefined;
  streamsOpened: number;
  controls: number;
  /** Bytes the Mux wrote back (echoes, credit, resets). */
  replyBytes: number;
}

/**
 * Feeds `input` to an acceptor Mux as socket reads, with handlers that read every stream as an
 * edge does. Exceptions escaping the Mux's own handling propagate to the caller (a finding).
 */
export async function sessionTarget(input: Buffer, seed: number): Promise<SessionOutcome> {
  const socket = new FuzzSocket();
  const streams: StreamDuplex[] = [];
  let controls = 0;
  let closedWith: string | undefined;
  const mux = new Mux(socket, {
    role: 'acceptor',
    peerTrailers: true,
    onStream: duplexes((stream) => {
      streams.push(stream);
      stream.on('error', () => undefined);
      // As the edge does: the peer's trailers are checked when its side ends.
      stream.on('end', () => trailerFields(stream.trailers));
      stream.resume();
    }),
    onControl: () => controls++,
  });
  mux.on('close', (error?: Error) => (closedWith = error ? error.message.replace(/\d+/g, 'N') : 'closed'));
  for (const piece of pieces(input, prng(seed))) {
    if (mux.isClosed) break;
    socket.emit('data', piece);
  }
  // Work the Mux deferred (uncorked writes, stream events) runs before the verdict.
  await new Promise((resolve) => setImmediate(resolve));
  const outcome: SessionOutcome = {
    closedWith: mux.isClosed ? (closedWith ?? 'closed') : undefined,
    streamsOpened: streams.length,
    controls,
    replyBytes: socket.written,
  };
  mux.destroy();
  socket.destroy();
  return outcome;
}

/** A short signature of an outcome: a new one makes its input worth keeping in the corpus. */
export function signature(decoded: DecodeOutcome, session: SessionOutcome): string {
  const types = [...new Set(decoded.frames.map((f) => `${f.type}/${f.flags & 3}/${f.stream === 0 ? 0 : f.stream % 2 ? 'o' : 'e'}`))]
    .sort()
    .join(',');
  return `${types}|${decoded.error ?? ''}|${session.closedWith ?? 'open'}|${Math.min(session.streamsOpened, 3)}`;
}
