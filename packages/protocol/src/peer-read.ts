import type { Mux } from './mux.js';

/**
 * Resolves true once the peer has read every frame sent on `mux` before this call: a PING sent
 * now is answered only after them, since a side reads its frames in order. Resolves false when
 * the connection closes first, or after `timeoutMs` if given (a peer that is frozen or gone has
 * nothing left to read).
 */
export function peerHasRead(mux: Mux, timeoutMs?: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (read: boolean): void => {
      if (timer) clearTimeout(timer);
      mux.off('pong', onPong);
      mux.off('close', onClose);
      resolve(read);
    };
    const onPong = (_rttMs: number, stamp: number): void => {
      if (stamp >= sent) done(true); // not the answer to an earlier ping
    };
    const onClose = (): void => done(false);
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => done(false), timeoutMs);
    mux.on('pong', onPong);
    mux.once('close', onClose);
    const sent = mux.ping();
  });
}
