import { once } from 'node:events';
import type { Socket } from 'node:net';
import { Mux, streamDuplex, type EdgeMessage, type RequestHead, type StreamDuplex } from '@svcrouter/protocol';
import { dialSession } from '@svcrouter/sdk';

/** An agent driven by the test: it binds one tunnel and answers each visitor stream as told. */
export interface HostileAgent {
  hostname: string;
  mux: Mux;
  socket: Socket;
  close(): void;
}

/**
 * Dials the edge with `token`, binds a tunnel and hands every visitor stream to `answer`, which
 * may send anything a real agent never would. The session answers the edge's pings as usual.
 */
export async function startHostileAgent(
  serverUrl: string,
  token: string,
  answer: (stream: StreamDuplex, head: RequestHead) => void,
  /** The optional protocol features it announces (default: all the SDK's; [] for an agent older than them). */
  features?: readonly string[],
): Promise<HostileAgent> {
  const socket = await dialSession({ serverUrl, token, features });
  let onBound: ((hostname: string) => void) | undefined;
  const bound = new Promise<string>((resolve) => (onBound = resolve));
  const mux = new Mux(socket, {
    role: 'dialer',
    onStream: (callbacks) => {
      const stream = streamDuplex(callbacks);
      stream.on('error', () => undefined);
      answer(stream, stream.meta as RequestHead);
    },
    onControl: (message) => {
      const control = message as EdgeMessage;
      if (control.type === 'bound') onBound?.(control.hostname);
    },
  });
  mux.sendControl({ type: 'bind', requestId: 1, local: 'localhost:1' });
  const hostname = await Promise.race([bound, once(mux, 'close').then(() => Promise.reject(new Error('session closed before bind')))]);
  return { hostname, mux, socket, close: () => mux.destroy() };
}
