import { readSync } from 'node:fs';
import type { Socket } from 'node:net';

/** Most bytes read back from a failed connection: a response head and a short refusal fit many times. */
const SALVAGE_BYTES = 256 * 1024;

/**
 * Reads what the origin sent that Node has not delivered yet, straight from the socket's file
 * descriptor, once a write has failed and before Node closes the socket.
 *
 * Why: an origin that answers before it reads the body (a 413 with `Connection: close`) and
 * closes makes its kernel send a reset, as bytes it never read are still arriving. When the
 * agent's next body write meets that reset, Node destroys the socket at once, and the answer,
 * already in the agent's receive buffer but not yet read, would be lost: the visitor would get
 * a 502 for an origin that answered 413. Direct clients (curl) read that answer; so must the agent.
 *
 * Plain TCP only (a TLS socket's bytes need its TLS state); returns nothing otherwise.
 */
export function readUndelivered(socket: Socket): Buffer[] {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0 || 'encrypted' in socket) return [];
  const pieces: Buffer[] = [];
  let total = 0;
  try {
    while (total < SALVAGE_BYTES) {
      const buffer = Buffer.allocUnsafe(64 * 1024);
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      pieces.push(buffer.subarray(0, n));
      total += n;
    }
  } catch {
    // EAGAIN (nothing more) or ECONNRESET (the reset itself, after the data): done either way.
  }
  return pieces;
}
