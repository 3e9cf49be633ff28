import type { Mux } from '@svcrouter/protocol';

/**
 * Resolves once the peer has read every frame sent on `mux` before this call: a PING sent now is
 * answered only after them, since a side reads its frames in order. Also resolves when the
 * connection closes or after `timeoutMs` (an edge that is frozen or gone has nothing left to read).
 */
export function peerHasRead(mux: Mux, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      mux.off('pong', onPong);
      mux.off('close', done);
      resolve();
    };
    const onPong = (_rttMs: number, stamp: number): void => {
      if (stamp >= sent) done(); // not the answer to an earlier ping
    };
    const timer = setTimeout(done, timeoutMs);
    mux.on('pong', onPong);
    mux.once('close', done);
    const sent = mux.ping();
  });
}
