import type { WindowTuner } from './mux-window.js';

/** What a stream needs from its session; implemented by Mux. */
export interface StreamTransport {
  /** Writes one frame; the payload is not copied. */
  sendFrame(type: number, flags: number, stream: number, payload?: Buffer): void;
  /** Writes one frame whose payload is `text` in UTF-8 (from jsonText). */
  sendTextFrame(type: number, flags: number, stream: number, text: string): void;
  /** Writes a frame the peer's own frames call for (WINDOW), within the session's reply budget. */
  sendReply(type: number, flags: number, stream: number, payload: Buffer): void;
  /** Runs `callback` once the session socket can take more bytes (at once if it can now). */
  whenWritable(callback: () => void): void;
  /** Whether the session socket can take more bytes now (whenWritable would call back at once). */
  readonly writable: boolean;
  /**
   * The stream's owner threw outside the frame being handled (a resume(), a drain, a listener a
   * tick later): the stream is reset with STREAM_FAILED and the failure reported, as for a throw
   * while a frame is handled. The session and its other streams carry on.
   */
  streamFailed(stream: number, error: unknown): void;
  /** Forgets the stream: no more frames will be sent or accepted for it. */
  forget(stream: number): void;
  /** Grows receive windows of readers that keep up; undefined keeps every window fixed. */
  readonly windowTuner?: WindowTuner | undefined;
  /** Whether the peer understands TRAILERS frames; without, trailers are dropped and a plain END is sent. */
  readonly peerTrailers?: boolean;
}
