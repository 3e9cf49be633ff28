/**
 * Test-only helpers: socket pairs (real loopback TCP, and an in-process pair that re-splits
 * every chunk into 1–7 byte pieces), connected Mux pairs, and a raw frame-level peer.
 * Not exported from index.ts.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { Duplex, type Readable } from 'node:stream';
import { FrameDecoder, encodeFrame, type Frame } from './frame.js';
import { Mux, type MuxOptions } from './mux.js';
import type { CallbackStream } from './callback-stream.js';
import { streamDuplex, type StreamDuplex } from './stream-duplex.js';

/** How the two ends of a session are connected. */
export type TransportKind = 'tcp' | 'chunked';
export const TRANSPORTS: readonly TransportKind[] = ['tcp', 'chunked'];

/** Two connected duplex ends plus a teardown that waits for everything to close. */
export interface SocketPair {
  dialerSocket: Duplex;
  acceptorSocket: Duplex;
  close(): Promise<void>;
}

/** Deterministic PRNG (mulberry32), so a failing chunking pattern can be replayed by seed. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Connected loopback TCP sockets (server on port 0, noDelay on both ends). */
export async function tcpPair(): Promise<SocketPair> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  const accepted = once(server, 'connection') as Promise<[net.Socket]>;
  const dialerSocket = net.connect(port, '127.0.0.1');
  const [[acceptorSocket]] = await Promise.all([accepted, once(dialerSocket, 'connect')]);
  dialerSocket.setNoDelay(true);
  acceptorSocket.setNoDelay(true);
  return {
    dialerSocket,
    acceptorSocket,
    async close() {
      dialerSocket.destroy();
      acceptorSocket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * One end of an in-process pipe. Every write reaches the peer on a later macrotask (like a
 * socket), re-split into pieces of 1..maxPiece bytes; backpressure follows the peer's reader.
 */
class ChunkingEnd extends Duplex {
  peer!: ChunkingEnd;
  private blockedWrite: (() => void) | undefined;

  constructor(
    private readonly random: () => number,
    private readonly maxPiece: number,
  ) {
    super({ allowHalfOpen: false });
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    this._write(Buffer.concat(chunks.map((c) => c.chunk)), 'binary', callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    setImmediate(() => {
      if (this.peer.destroyed) return callback();
      let accepting = true;
      for (let offset = 0; offset < chunk.length;) {
        const size = 1 + Math.floor(this.random() * this.maxPiece);
        accepting = this.peer.push(chunk.subarray(offset, offset + size));
        offset += size;
      }
      if (accepting) callback();
      else this.peer.blockedWrite = () => callback();
    });
  }

  override _read(): void {
    const resume = this.blockedWrite;
    this.blockedWrite = undefined;
    resume?.();
  }

  override _final(callback: (error?: Error | null) => void): void {
    setImmediate(() => {
      if (!this.peer.destroyed) this.peer.push(null);
      callback();
    });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Like a TCP reset: the peer sees its connection close too.
    setImmediate(() => this.peer.destroy());
    callback(error);
  }
}

/** In-process pair whose every chunk is re-split into 1..maxPiece byte pieces. */
export function chunkedPair(seed = 1, maxPiece = 7): SocketPair {
  const random = prng(seed);
  const dialerSocket = new ChunkingEnd(random, maxPiece);
  const acceptorSocket = new ChunkingEnd(random, maxPiece);
  dialerSocket.peer = acceptorSocket;
  acceptorSocket.peer = dialerSocket;
  return {
    dialerSocket,
    acceptorSocket,
    async close() {
      const closed = [dialerSocket, acceptorSocket].filter((s) => !s.closed).map((s) => once(s, 'close'));
      dialerSocket.destroy();
      acceptorSocket.destroy();
      await Promise.all(closed);
    },
  };
}

/** A socket pair of the given kind. */
export function socketPair(kind: TransportKind, seed = 1): Promise<SocketPair> {
  return kind === 'tcp' ? tcpPair() : Promise.resolve(chunkedPair(seed));
}

/** A connected dialer (agent) and acceptor (edge) session. */
export interface MuxPair extends SocketPair {
  dialer: Mux;
  acceptor: Mux;
}

type SideOptions = Omit<MuxOptions, 'role' | 'window'>;

/** Connects a dialer and an acceptor Mux over a fresh socket pair. */
export async function muxPair(
  kind: TransportKind,
  options: { window?: number; dialer?: SideOptions; acceptor?: SideOptions } = {},
): Promise<MuxPair> {
  const pair = await socketPair(kind);
  const dialer = new Mux(pair.dialerSocket, { role: 'dialer', window: options.window, ...options.dialer });
  const acceptor = new Mux(pair.acceptorSocket, { role: 'acceptor', window: options.window, ...options.acceptor });
  return {
    ...pair,
    dialer,
    acceptor,
    async close() {
      dialer.destroy();
      acceptor.destroy();
      await pair.close();
    },
  };
}

/** A Mux whose peer is driven frame by frame by the test. */
export interface RawPeer {
  mux: Mux;
  /** Frames the mux sent, payloads copied. */
  frames: Frame[];
  /** Writes raw bytes to the mux. */
  sendBytes(bytes: Buffer): void;
  /** Writes one frame to the mux. */
  send(type: number, flags: number, stream: number, payload?: Buffer): void;
  /** Resolves with the next frame that matches. */
  nextFrame(match: (frame: Frame) => boolean): Promise<Frame>;
  close(): Promise<void>;
}

/** A Mux over the chunked pair with a hand-driven peer on the other end. */
export function rawPeer(options: MuxOptions): RawPeer {
  const pair = chunkedPair();
  const [muxSocket, rawSocket] =
    options.role === 'dialer' ? [pair.dialerSocket, pair.acceptorSocket] : [pair.acceptorSocket, pair.dialerSocket];
  const mux = new Mux(muxSocket, options);
  const frames: Frame[] = [];
  const waiters: Array<{ match: (frame: Frame) => boolean; resolve: (frame: Frame) => void }> = [];
  const decoder = new FrameDecoder((frame) => {
    const copy = { ...frame, payload: Buffer.from(frame.payload) };
    frames.push(copy);
    const index = waiters.findIndex((w) => w.match(copy));
    if (index >= 0) waiters.splice(index, 1)[0]!.resolve(copy);
  });
  rawSocket.on('data', (chunk: Buffer) => decoder.push(chunk));
  rawSocket.on('error', () => undefined);
  return {
    mux,
    frames,
    sendBytes: (bytes) => rawSocket.write(bytes),
    send: (type, flags, stream, payload) => rawSocket.write(encodeFrame(type, flags, stream, payload)),
    nextFrame: (match) => {
      const seen = frames.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    async close() {
      mux.destroy();
      await pair.close();
    },
  };
}

/** Opens a stream on `mux` as a Duplex (streamDuplex over open()); with `end`, no body follows. */
export function openDuplex(mux: Mux, meta: unknown, end = false): StreamDuplex {
  return streamDuplex(mux.open(meta, undefined, end));
}

/** An `onStream` option that hands each of the peer's streams to `handler` as a Duplex. */
export function duplexes(handler: (stream: StreamDuplex) => void): (stream: CallbackStream) => void {
  return (stream) => handler(streamDuplex(stream));
}

/**
 * Reads a stream to its end. Not `for await`: the async iterator destroys the stream when it
 * finishes, and destroying a StreamDuplex whose write side is still open resets it.
 */
export function collect(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** Hex sha256 of a buffer. */
export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Writes `data` in `chunkSize` pieces honouring backpressure, then ends the stream. */
export async function writeAll(stream: Duplex, data: Buffer, chunkSize = 64 * 1024): Promise<void> {
  for (let offset = 0; offset < data.length; offset += chunkSize) {
    if (!stream.write(data.subarray(offset, offset + chunkSize))) await once(stream, 'drain');
  }
  stream.end();
}
