import type { Socket } from 'node:net';
import type { StreamResetError } from './errors.js';
import type { CallbackStream, CallbackStreamHandler } from './callback-stream.js';

/** What the owner of a SocketPipe hears and decides; every hook is optional. */
export interface SocketPipeHooks {
  /** Bytes read from the socket, before they go on the stream. False drops them: the hook has cut the connection. */
  fromSocket?(chunk: Buffer): boolean;
  /** Bytes from the peer, before they are written to the socket. False drops them: the hook has cut the connection. */
  fromStream?(chunk: Buffer): boolean;
  /** The peer's HEADERS metadata (once). */
  onHeaders?(meta: unknown): void;
  /** The peer reset the stream or the session ended; the socket is destroyed right after. */
  onReset?(error: StreamResetError): void;
}

/**
 * Carries a socket's bytes over one mux stream and the stream's bytes to the socket, driving
 * both with callbacks: the raw TCP tunnel's pipe on the edge (the visitor's socket) and on the
 * agent (the local service's). A Duplex per side and `pipe()` both ways cost a connection two
 * stream objects, their buffers and a tick per chunk, the largest share of svcRouter's own CPU
 * per short connection (docs/performance.md, "TCP tunnels").
 *
 * Backpressure: a socket write that returns false pauses the stream (the peer's bytes then wait
 * in the stream, their credit unreturned, at most the window) until the socket drains; a stream
 * write that returns false pauses the socket until the stream drains. So neither side ever holds
 * more than the window and a socket's write buffer, however slow the other is.
 *
 * Half-close: the socket's FIN ends the stream's write side (END leaves after every byte
 * written) and the peer's END ends the socket's write side; each direction closes on its own.
 * A reset from the peer (or the session's end) destroys the socket; destroying the socket is
 * the owner's business, and so is resetting the stream when the socket closes early (see
 * `cleanlyEnded`).
 */
export class SocketPipe implements CallbackStreamHandler {
  private started = false;
  /** The peer's END reached the socket (socket.end()). */
  private peerEnded = false;
  /** The socket's FIN reached the stream (stream.end()). */
  private socketEnded = false;

  /**
   * Attaches to `stream` at once (so a reset before start() is heard) but moves no byte until
   * start(): a stream the peer wrote to early keeps its bytes, within the window.
   */
  constructor(
    private readonly socket: Socket,
    readonly stream: CallbackStream,
    private readonly hooks: SocketPipeHooks = {},
  ) {
    stream.pause();
    stream.attach(this);
  }

  /** Whether both directions ended with a FIN each way, not a reset: the stream needs no reset when the socket closes. */
  get cleanlyEnded(): boolean {
    return this.peerEnded && this.socketEnded && this.stream.resetCode === undefined;
  }

  /** Starts moving bytes both ways (once). */
  start(): void {
    if (this.started) return;
    this.started = true;
    const { socket, stream } = this;
    socket.on('data', (chunk: Buffer) => {
      if (this.hooks.fromSocket?.(chunk) === false) return;
      if (!stream.write(chunk)) socket.pause();
    });
    socket.on('end', () => {
      this.socketEnded = true;
      stream.end();
    });
    socket.on('drain', () => stream.resume());
    stream.resume();
  }

  // ---- CallbackStreamHandler ----

  /** @internal */
  onHeaders(meta: unknown): void {
    this.hooks.onHeaders?.(meta);
  }

  /** @internal */
  onData(chunk: Buffer): void {
    if (this.hooks.fromStream?.(chunk) === false) return;
    if (!this.socket.write(chunk)) this.stream.pause();
  }

  /** @internal */
  onEnd(): void {
    this.peerEnded = true;
    this.socket.end();
  }

  /** @internal The stream can take more: the socket is read again. */
  onDrain(): void {
    this.socket.resume();
  }

  /** @internal */
  onReset(error: StreamResetError): void {
    this.hooks.onReset?.(error);
    this.socket.destroy();
  }

  /** @internal A reset on this side (the owner's, or the session's after a callback threw): the socket goes too. */
  onLocalReset(): void {
    this.socket.destroy();
  }
}
