import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  FLAG_ACK,
  FLAG_END,
  FrameDecoder,
  FrameType,
  FRAME_HEADER_BYTES,
  ProtocolError,
  decodeJson,
  jsonText,
  type Frame,
} from './frame.js';
import { FrameWriter } from './frame-writer.js';
import { CallbackStream, type CallbackStreamHandler } from './callback-stream.js';
import type { StreamTransport } from './stream-transport.js';
import { MAX_STREAM_WINDOW, SESSION_WINDOW_GROWTH_BUDGET, WindowTuner } from './mux-window.js';
import { IdTable } from './id-table.js';
import { unwatchLiveness, watchLiveness, type LivenessWatched } from './liveness.js';
import { ResetCode } from './messages.js';
import { JsonTextMemo, MetaMemo } from './meta-memo.js';

/**
 * Default per-stream flow-control window, where every stream's receive window starts: small
 * enough to bound what a slow visitor holds, and it grows for readers that keep up (mux-window.ts).
 */
export const INITIAL_STREAM_WINDOW = 1024 * 1024;
/**
 * Bytes the session socket may hold in user space before writers are told to wait. Node's
 * default (16 KiB on Node 20) is below one 64 KiB read from an origin, so every chunk of a
 * bulk transfer paused its source until the socket drained: one pause/resume (two epoll_ctl
 * calls and a loop turn) per chunk, and nothing read while writing. 1 MiB keeps a few chunks
 * in flight and still bounds the memory a congested session holds.
 */
export const SESSION_WRITE_HIGH_WATER = 1024 * 1024;
/**
 * Bytes of replies the peer's own frames call for (PING echoes, WINDOW, REFUSED resets) the
 * session may queue while the socket never empties. A peer that keeps asking and reads nothing
 * would otherwise grow the queue without end; past this its session closes. A reading peer
 * empties the socket over and over and never comes near it.
 */
export const CONTROL_REPLY_BUDGET = 1024 * 1024;
/** A PING's payload: the sender's 8 opaque bytes, echoed back. */
const PING_PAYLOAD_BYTES = 8;
/** Longest round trip a PING answer is believed to have taken; a session this slow is closed by its heartbeat first. */
const MAX_PLAUSIBLE_RTT_MS = 60_000;
/** Largest stream id; a session that has used them all must be replaced. */
const MAX_STREAM_ID = 0xffffffff;

export interface MuxOptions {
  /** `dialer` opens odd stream ids (the agent), `acceptor` even ones (the edge). */
  role: 'dialer' | 'acceptor';
  /**
   * Per-stream window in bytes, 1 to 2^31-1 (default INITIAL_STREAM_WINDOW). It is not
   * negotiated on the wire: both sides must use the same value, or the larger side's sends
   * get its streams reset with FLOW_CONTROL.
   */
  window?: number;
  /**
   * Largest receive window a stream's window may grow to while its reader keeps up; growth is
   * local (sent as extra credit), so the peer need not agree. Default MAX_STREAM_WINDOW when
   * `window` is the default, else `window` itself (no growth).
   */
  maxWindow?: number;
  /** Growth beyond `window` all open streams may hold together (default SESSION_WINDOW_GROWTH_BUDGET). */
  windowGrowthBudget?: number;
  /**
   * Called for every stream the peer opens; absent means the peer may not open streams
   * (they are reset with REFUSED). It attaches a handler before returning, or wraps the
   * stream in a Duplex with streamDuplex() (which attaches itself) to pipe bytes. An exception
   * thrown here resets that stream (STREAM_FAILED).
   */
  onStream?: (stream: CallbackStream) => void;
  /** Called for every control message on stream 0, in order. An exception thrown here ends the session. */
  onControl?: (message: unknown) => void;
  /**
   * Whether the peer understands TRAILERS frames (it listed FEATURE_TRAILERS in the handshake).
   * Default false: streams drop their trailers and end with a plain END, as an older peer
   * closes the session on a frame type it does not know.
   */
  peerTrailers?: boolean;
}

/**
 * A session: many streams and a control channel over one socket.
 *
 * Ordering: frames are written in call order. Writes made in the same event-loop turn are
 * corked and leave in one writev in that turn's check phase (setImmediate, never a timer).
 * Under load one poll phase runs the callbacks of many sockets (visitors on the edge, origin
 * connections on the agent); ending the cork per tick would cost one syscall per request,
 * per turn costs one for all of them. No write waits for a later turn to coalesce.
 *
 * Events:
 * - 'close' (error | undefined): once, after every open stream was destroyed with SESSION_CLOSED.
 *   The error is set when the session failed (socket error, protocol violation, heartbeat).
 * - 'goaway' (reason): the peer is closing the session in an orderly way.
 * - 'pong' (rttMs, stamp): a PING was answered; `stamp` is what `ping()` answered for it.
 * - 'streamError' (error, streamId): a stream's handler threw; that stream was reset.
 *
 * Frames are handled synchronously as they are decoded, so callbacks and stream listeners run
 * inside the socket's 'data' handler. An exception thrown there while handling one stream's
 * frame resets that stream with STREAM_FAILED and the session carries on: one request's failure
 * must never cost the others on the session. A ProtocolError, or an exception thrown by the
 * control handler, ends the session.
 */
export class Mux extends EventEmitter implements StreamTransport, LivenessWatched {
  /** Not a Map: see id-table.ts for what a Map's churn does to the GC. */
  private readonly streams = new IdTable<CallbackStream>();
  private readonly decoder: FrameDecoder;
  /** The peer's request heads (OPEN) and reply heads (HEADERS), decoded once while they repeat; ours, encoded once. */
  private readonly openMemo = new MetaMemo();
  private readonly headersMemo = new MetaMemo();
  private readonly openText = new JsonTextMemo();
  private readonly window: number;
  private nextStreamId: number;
  /** Highest stream id the peer has opened; its ids only ever grow. */
  private lastPeerStreamId = 0;
  private readonly writer: FrameWriter;
  private corked = false;
  private readonly uncorkBound = (): void => this.uncork();
  private drainWaiters: Array<() => void> = [];
  /** Reply bytes queued since the peer last took anything (see CONTROL_REPLY_BUDGET). */
  private replyBacklog = 0;
  private queuedAtLastReply = 0;
  private closed = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private heardFromPeer = true;
  /** Round-trip time of the last answered ping, in milliseconds. */
  lastPingRttMs: number | undefined;
  /** @internal Grows the receive windows of streams whose readers keep up; undefined: fixed windows. */
  readonly windowTuner: WindowTuner | undefined;

  constructor(
    private readonly socket: Socket | Duplex,
    private readonly options: MuxOptions,
  ) {
    super();
    this.window = options.window ?? INITIAL_STREAM_WINDOW;
    if (!Number.isInteger(this.window) || this.window < 1 || this.window > 0x7fffffff) {
      throw new RangeError(`window must be an integer from 1 to 2^31-1, got ${this.window}`);
    }
    const maxWindow = options.maxWindow ?? (options.window === undefined ? MAX_STREAM_WINDOW : this.window);
    if (!Number.isInteger(maxWindow) || maxWindow < this.window || maxWindow > 0x7fffffff) {
      throw new RangeError(`maxWindow must be an integer from window to 2^31-1, got ${maxWindow}`);
    }
    if (maxWindow > this.window) this.windowTuner = new WindowTuner(maxWindow, options.windowGrowthBudget ?? SESSION_WINDOW_GROWTH_BUDGET);
    this.nextStreamId = options.role === 'dialer' ? 1 : 2;
    this.writer = new FrameWriter(socket);
    // DATA is delivered as it arrives: no copy to join a frame split across socket reads.
    this.decoder = new FrameDecoder((frame) => this.onFrame(frame), { streamData: true });
    socket.on('data', (chunk: Buffer) => {
      if (this.closed) return;
      this.heardFromPeer = true;
      try {
        this.decoder.push(chunk);
      } catch (error) {
        this.destroy(error as Error);
      }
    });
    socket.on('drain', () => {
      this.replyBacklog = 0;
      this.flushDrainWaiters();
    });
    socket.on('error', (error) => this.destroy(error));
    socket.on('close', () => this.destroy());
    socket.on('end', () => this.destroy());
  }

  /** Whether the peer understands TRAILERS frames (MuxOptions.peerTrailers). */
  get peerTrailers(): boolean {
    return this.options.peerTrailers === true;
  }

  /** Number of open streams. */
  get streamCount(): number {
    return this.streams.size;
  }

  /** Whether the session has ended. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Per-stream flow-control window of this session, in bytes. */
  get streamWindow(): number {
    return this.window;
  }

  /**
   * Opens a stream carrying `meta` (JSON-serialisable), driven by `handler`; with `end`, no
   * body follows. The handler is attached before any frame of the peer's can arrive. Without
   * one, the caller attaches it later (streamDuplex() does, to pipe bytes): what arrives
   * meanwhile waits in the stream, its credit unreturned.
   * Throws ProtocolError when the session is closed or its stream ids are used up.
   */
  open(meta: unknown, handler?: CallbackStreamHandler, end = false): CallbackStream {
    const text = this.openText.encode(meta);
    const stream = new CallbackStream(this, this.takeStreamId(), meta, this.window);
    if (handler) stream.attach(handler);
    return this.sendOpen(stream, text, end);
  }

  /** Sends a control message on stream 0 (dropped once the session is closed). */
  sendControl(message: unknown): void {
    this.sendTextFrame(FrameType.CONTROL, 0, 0, jsonText(message));
  }

  /**
   * Sends a PING every `intervalMs` and ends the session when nothing at all was heard
   * from the peer for `timeoutMs`. Any frame counts as a sign of life, so a busy session
   * is never killed for a ping stuck behind bulk data. The first ping leaves at once, so the
   * round trip that window growth weighs is known from the session's start.
   */
  startHeartbeat(intervalMs: number, timeoutMs: number): void {
    if (this.closed) return;
    if (this.heartbeat) clearInterval(this.heartbeat);
    unwatchLiveness(this);
    let silentMs = 0;
    this.sendPing();
    this.heartbeat = setInterval(() => {
      silentMs = this.heardFromPeer ? 0 : silentMs + intervalMs;
      this.heardFromPeer = false;
      if (silentMs >= timeoutMs) {
        this.destroy(new ProtocolError(`no heartbeat from peer for ${silentMs} ms`));
        return;
      }
      this.sendPing();
    }, intervalMs);
    this.heartbeat.unref();
  }

  /**
   * Ends the session when nothing at all was heard from the peer for `timeoutMs`, sending no
   * PING of its own but one now (for the round trip that window growth weighs): for the side
   * that answers the peer's heartbeat rather than keeping one. No timer of its own either: one
   * sweep per process checks every such session (liveness.ts), so a quiet session costs only
   * the answers to its peer's pings.
   */
  watchPeer(timeoutMs: number): void {
    if (this.closed) return;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.sendPing();
    watchLiveness(this, timeoutMs);
  }

  /** @internal For the liveness sweep: whether the peer spoke since the last call. */
  takeHeard(): boolean {
    const heard = this.heardFromPeer;
    this.heardFromPeer = false;
    return heard;
  }

  /** @internal For the liveness sweep: the peer was silent too long. */
  onSilent(silentMs: number): void {
    this.destroy(new ProtocolError(`no heartbeat from peer for ${silentMs} ms`));
  }

  /**
   * Sends a PING now, outside the heartbeat; answers its stamp, which the 'pong' for it carries.
   * Its answer shows the peer has read everything sent before it.
   */
  ping(): number {
    return this.sendPing();
  }

  /** A PING stamped with the time it left; its answer gives the round trip. */
  private sendPing(): number {
    const now = performance.now();
    const stamp = Buffer.allocUnsafe(8);
    stamp.writeDoubleBE(now, 0);
    this.sendFrame(FrameType.PING, 0, 0, stamp);
    return now;
  }

  /** Graceful close: tells the peer why, then ends the socket after pending writes. */
  close(reason = 'closing'): void {
    if (this.closed) return;
    this.sendFrame(FrameType.GOAWAY, 0, 0, Buffer.from(reason));
    this.uncork();
    this.socket.end();
    this.destroy();
  }

  /** Ends the session at once; every open stream is reset. */
  destroy(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    unwatchLiveness(this);
    const streams = this.streams.snapshot();
    this.streams.clear();
    for (const stream of streams) stream.onReset('SESSION_CLOSED');
    this.flushDrainWaiters();
    if (!this.socket.destroyed) {
      if (error) {
        this.socket.destroy();
      } else {
        this.uncork(); // frames of this turn go out before the FIN
        this.socket.end();
      }
    }
    this.emit('close', error);
  }

  /** Registers a stream we opened and sends its OPEN (metadata already encoded: a bad one spends no id). */
  private sendOpen(stream: CallbackStream, text: string, end: boolean): CallbackStream {
    this.streams.set(stream.id, stream);
    this.sendTextFrame(FrameType.OPEN, end ? FLAG_END : 0, stream.id, text);
    if (end) stream.endOnOpen();
    return stream;
  }

  private takeStreamId(): number {
    if (this.closed) throw new ProtocolError('session is closed');
    const id = this.nextStreamId;
    if (id > MAX_STREAM_ID) throw new ProtocolError('stream ids exhausted; open a new session');
    this.nextStreamId += 2;
    return id;
  }

  // ---- StreamTransport ----

  /** @internal */
  sendFrame(type: number, flags: number, stream: number, payload?: Buffer): void {
    if (this.closed) return;
    this.corkForTurn();
    this.writer.frame(type, flags, stream, payload);
  }

  /** @internal Sends a frame the peer's own frames call for; a peer that reads none of them loses its session. */
  sendReply(type: number, flags: number, stream: number, payload: Buffer): void {
    if (this.closed) return;
    // The peer took something since the last reply (the queue emptied or shrank): it reads.
    const queued = this.socket.writableLength;
    if (queued === 0 || queued < this.queuedAtLastReply) this.replyBacklog = 0;
    this.queuedAtLastReply = queued;
    if (this.replyBacklog > CONTROL_REPLY_BUDGET) {
      this.destroy(new ProtocolError(`peer reads nothing: ${this.replyBacklog} bytes of replies queued`));
      return;
    }
    this.replyBacklog += FRAME_HEADER_BYTES + payload.length;
    this.sendFrame(type, flags, stream, payload);
  }

  /** @internal */
  sendTextFrame(type: number, flags: number, stream: number, text: string): void {
    if (this.closed) return;
    this.corkForTurn();
    this.writer.textFrame(type, flags, stream, text);
  }

  /** Frames of this loop turn leave together at its end (see the class comment). */
  private corkForTurn(): void {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    setImmediate(this.uncorkBound);
  }

  /** @internal */
  whenWritable(callback: () => void): void {
    if (this.writable) callback();
    else this.drainWaiters.push(callback);
  }

  /** @internal */
  get writable(): boolean {
    return this.closed || this.socket.writableLength < SESSION_WRITE_HIGH_WATER;
  }

  /** @internal */
  forget(stream: number): void {
    this.streams.delete(stream);
  }

  // ---- incoming frames ----

  private onFrame(frame: Frame): void {
    if (this.closed) return; // a callback closed the session while a chunk was being decoded
    if (frame.stream === 0) return this.onSessionFrame(frame);
    try {
      this.onStreamFrame(frame);
    } catch (error) {
      if (error instanceof ProtocolError || this.closed) throw error;
      this.failStream(frame.stream, error as Error);
    }
  }

  /** @internal */
  streamFailed(stream: number, error: unknown): void {
    if (this.closed) return;
    this.failStream(stream, error instanceof Error ? error : new Error(String(error)));
  }

  /** A stream's handler threw while handling its frame: that stream ends, the session does not. */
  private failStream(id: number, error: Error): void {
    const stream = this.streams.get(id);
    if (stream) stream.reset(ResetCode.STREAM_FAILED);
    else this.sendFrame(FrameType.RESET, 0, id, Buffer.from(ResetCode.STREAM_FAILED));
    this.emit('streamError', error, id);
  }

  private onStreamFrame(frame: Frame): void {
    if (frame.type === FrameType.OPEN) return this.onOpen(frame);
    const stream = this.streams.get(frame.stream);
    // Frames for a stream we already closed are normal after a reset race: drop them.
    if (!stream) return;
    switch (frame.type) {
      case FrameType.DATA:
        return stream.onData(frame.payload, frame.flags);
      case FrameType.HEADERS:
        return stream.onHeaders(this.headersMemo.decode(frame.payload), frame.flags);
      case FrameType.INFO:
        return stream.onInfo(decodeJson(frame.payload));
      case FrameType.TRAILERS:
        return stream.onTrailers(decodeJson(frame.payload));
      case FrameType.WINDOW:
        if (frame.payload.length !== 4) throw new ProtocolError(`WINDOW frame of ${frame.payload.length} bytes`);
        return stream.onWindow(frame.payload.readUInt32BE(0));
      case FrameType.RESET:
        return stream.onReset(frame.payload.toString('utf8') || 'CANCEL');
      default:
        throw new ProtocolError(`unexpected frame type ${frame.type} on stream ${frame.stream}`);
    }
  }

  private onSessionFrame(frame: Frame): void {
    switch (frame.type) {
      case FrameType.CONTROL: {
        const message = decodeJson(frame.payload); // malformed JSON is fatal even without a handler
        this.options.onControl?.(message);
        return;
      }
      case FrameType.PING:
        if (frame.flags & FLAG_ACK) {
          if (frame.payload.length === 8) {
            const stamp = frame.payload.readDoubleBE(0);
            const rttMs = performance.now() - stamp;
            // The stamp is the peer's to echo and may be a lie: a round trip that cannot be one of
            // ours (negative, not a number, implausibly long) is ignored, not let steer window growth.
            if (!(rttMs >= 0 && rttMs <= MAX_PLAUSIBLE_RTT_MS)) return;
            this.lastPingRttMs = rttMs;
            if (this.windowTuner) this.windowTuner.rttMs = rttMs;
            this.emit('pong', rttMs, stamp);
          }
        } else {
          // Only the 8 bytes a ping carries are echoed: a larger payload would make each echo a
          // megabyte-sized reply the peer chose.
          if (frame.payload.length !== PING_PAYLOAD_BYTES) throw new ProtocolError(`PING frame of ${frame.payload.length} bytes`);
          this.sendReply(FrameType.PING, FLAG_ACK, 0, Buffer.from(frame.payload));
        }
        return;
      case FrameType.GOAWAY:
        this.emit('goaway', frame.payload.toString('utf8'));
        return;
      default:
        throw new ProtocolError(`unexpected frame type ${frame.type} on stream 0`);
    }
  }

  private onOpen(frame: Frame): void {
    const peerParity = this.options.role === 'dialer' ? 0 : 1;
    // Ids only grow, so a reused id (even of a stream already forgotten) is a peer bug.
    if (frame.stream % 2 !== peerParity || frame.stream <= this.lastPeerStreamId) {
      throw new ProtocolError(`invalid stream id ${frame.stream} in OPEN`);
    }
    this.lastPeerStreamId = frame.stream;
    const meta = this.openMemo.decode(frame.payload);
    const onStream = this.options.onStream;
    if (!onStream) {
      this.sendReply(FrameType.RESET, 0, frame.stream, Buffer.from('REFUSED'));
      return;
    }
    const stream = new CallbackStream(this, frame.stream, meta, this.window);
    this.streams.set(frame.stream, stream);
    // End the read side before the handler runs, so a handler that resets at once sees a settled stream.
    if (frame.flags & FLAG_END) stream.onRemoteEnd();
    onStream(stream);
  }

  private uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.writer.flush();
    this.socket.uncork();
  }

  private flushDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter();
  }
}

/** Header bytes on the wire per frame; exported for the benchmark's accounting. */
export const FRAME_OVERHEAD = FRAME_HEADER_BYTES;
