import { once } from 'node:events';
import type { Socket } from 'node:net';
import { FLAG_ACK, FrameDecoder, FrameType, encodeFrame, type EdgeMessage, type Frame } from '@svcrouter/protocol';
import { dialSession } from '@svcrouter/sdk';

/**
 * An agent session driven frame by frame: the test writes any bytes it likes after the 101 and
 * reads every frame the edge sends. It answers the edge's heartbeat pings (so the session is not
 * closed for silence) and nothing else.
 */
export interface RawAgent {
  socket: Socket;
  /** Every frame received so far (payloads copied). */
  frames: Frame[];
  /** Resolves once the edge has closed the session (the socket closed). */
  closed: Promise<void>;
  send(type: number, flags: number, stream: number, payload?: Buffer | string): void;
  control(message: unknown): void;
  /** The first received or future frame matching `match`. */
  next(match: (frame: Frame) => boolean): Promise<Frame>;
  /** Binds with `request` (requestId added) and resolves with the edge's answer ('bound' or 'bindError'). */
  bind(request?: Record<string, unknown>): Promise<Extract<EdgeMessage, { type: 'bound' } | { type: 'bindError' }>>;
  close(): void;
}

let nextRequestId = 1;

export async function startRawAgent(serverUrl: string, token: string): Promise<RawAgent> {
  const socket = await dialSession({ serverUrl, token });
  socket.on('error', () => undefined);
  const frames: Frame[] = [];
  const waiters: Array<{ match: (frame: Frame) => boolean; resolve: (frame: Frame) => void }> = [];
  const send = (type: number, flags: number, stream: number, payload?: Buffer | string): void => {
    if (socket.destroyed) return;
    socket.write(encodeFrame(type, flags, stream, typeof payload === 'string' ? Buffer.from(payload) : payload));
  };
  const decoder = new FrameDecoder((frame) => {
    const copy = { ...frame, payload: Buffer.from(frame.payload) };
    frames.push(copy);
    if (copy.type === FrameType.PING && !(copy.flags & FLAG_ACK)) send(FrameType.PING, FLAG_ACK, 0, copy.payload);
    for (let i = 0; i < waiters.length; i++) {
      if (!waiters[i]!.match(copy)) continue;
      waiters.splice(i, 1)[0]!.resolve(copy);
      i--;
    }
  });
  socket.on('data', (chunk: Buffer) => {
    try {
      decoder.push(chunk);
    } catch {
      socket.destroy();
    }
  });
  const closed = once(socket, 'close').then(() => undefined);
  const next = (match: (frame: Frame) => boolean): Promise<Frame> => {
    const seen = frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => waiters.push({ match, resolve }));
  };
  const control = (message: unknown): void => send(FrameType.CONTROL, 0, 0, JSON.stringify(message));
  return {
    socket,
    frames,
    closed,
    send,
    control,
    next,
    async bind(request = {}) {
      const requestId = nextRequestId++;
      control({ type: 'bind', requestId, local: 'localhost:1', ...request });
      const frame = await next((f) => {
        if (f.type !== FrameType.CONTROL) return false;
        const message = JSON.parse(f.payload.toString('utf8')) as { requestId?: number };
        return message.requestId === requestId;
      });
      return JSON.parse(frame.payload.toString('utf8')) as Extract<EdgeMessage, { type: 'bound' } | { type: 'bindError' }>;
    },
    close: () => socket.destroy(),
  };
}

/** The JSON of an OPEN frame the edge sent: the visitor's request head. */
export function openHead(frame: Frame): { m: string; p: string; t: string } {
  return JSON.parse(frame.payload.toString('utf8')) as { m: string; p: string; t: string };
}
