import type { Socket } from 'node:net';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello } from './client-hello.js';

/** How long a visitor has to send its whole ClientHello while the edge reads SNI: slower closes the connection. */
export const CLIENT_HELLO_TIMEOUT_MS = 10_000;

/**
 * Reads a connection's ClientHello without consuming it: `done` gets its server name (undefined
 * when it sends none) and every byte read so far, with the socket paused and nothing of ours left
 * listening on it. A ClientHello that is not TLS, is malformed, grows past
 * MAX_CLIENT_HELLO_BYTES or takes longer than `timeoutMs` closes the connection.
 */
export function peekServerName(
  socket: Socket,
  done: (serverName: string | undefined, head: Buffer) => void,
  timeoutMs = CLIENT_HELLO_TIMEOUT_MS,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  timer.unref();
  const stop = (): void => {
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('close', stop);
    socket.off('error', onError);
  };
  const onError = (): void => {
    stop();
    socket.destroy();
  };
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    size += chunk.length;
    const bytes = chunks.length === 1 ? chunk : Buffer.concat(chunks, size);
    chunks.splice(0, chunks.length, bytes);
    const hello = parseClientHello(bytes.length > MAX_CLIENT_HELLO_BYTES ? bytes.subarray(0, MAX_CLIENT_HELLO_BYTES) : bytes);
    if (hello.kind === 'more' && bytes.length < MAX_CLIENT_HELLO_BYTES) return;
    stop();
    socket.pause();
    if (hello.kind !== 'hello') return void socket.destroy();
    done(hello.serverName, bytes);
  };
  socket.on('data', onData);
  socket.once('close', stop);
  socket.on('error', onError);
  // Handed on paused (after a PROXY header): read it now.
  socket.resume();
}
