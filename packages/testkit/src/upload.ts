import type { ClientRequest } from 'node:http';

// A request body sent as fast as the socket takes it: the metering tests and the crash
// benchmark count what visitors' sockets accepted, so both need the same pump.

/**
 * Writes `size` bytes to `req` in pieces of `piece` (its last piece cut short), honouring
 * backpressure, then ends it. `onAccepted` gets each piece's length once the socket took it.
 * Resolves when the exchange is over, whole or cut (response closed, request failed or closed);
 * never rejects, so a visitor loop can run through server kills.
 */
export function sendBody(req: ClientRequest, size: number, piece: Buffer, onAccepted: (bytes: number) => void): Promise<void> {
  return new Promise((resolve) => {
    let left = size;
    let ended = false;
    const finish = (): void => {
      ended = true;
      resolve();
    };
    const pump = (): void => {
      while (left > 0 && !ended) {
        const next = piece.subarray(0, Math.min(piece.length, left));
        left -= next.length;
        const more = req.write(next, (error) => {
          if (!error) onAccepted(next.length);
        });
        if (!more) return void req.once('drain', pump);
      }
      if (!ended) req.end();
    };
    req.on('response', (res) => {
      res.resume();
      res.on('close', finish);
      res.on('error', finish);
    });
    req.on('error', finish);
    req.on('close', finish);
    pump();
  });
}
