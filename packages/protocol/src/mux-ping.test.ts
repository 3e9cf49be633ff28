import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FLAG_ACK, FrameType } from './frame.js';
import { rawPeer } from './test-support.js';

/** Yields to the event loop, so the session reads what was written. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function stamped(stamp: number): Buffer {
  const payload = Buffer.alloc(8);
  payload.writeDoubleBE(stamp, 0);
  return payload;
}

describe('PING answers', () => {
  test('ping() sends a PING now, and its answer carries the stamp ping() returned', async () => {
    const peer = rawPeer({ role: 'acceptor' });
    try {
      const stamp = peer.mux.ping();
      const ping = await peer.nextFrame((frame) => frame.type === FrameType.PING);
      assert.equal(ping.payload.readDoubleBE(0), stamp);
      const pongs: Array<[number, number]> = [];
      peer.mux.on('pong', (rtt: number, echoed: number) => pongs.push([rtt, echoed]));
      peer.send(FrameType.PING, FLAG_ACK, 0, ping.payload);
      await turn();
      assert.equal(pongs.length, 1);
      assert.equal(pongs[0]![1], stamp);
      assert.ok(pongs[0]![0] >= 0);
    } finally {
      await peer.close();
    }
  });

  test('an answer with a stamp no ping of ours could carry is ignored: no pong, no round trip', async () => {
    const peer = rawPeer({ role: 'acceptor' });
    try {
      let pongs = 0;
      peer.mux.on('pong', () => pongs++);
      const now = performance.now();
      for (const stamp of [Number.NaN, now + 60_000, -1e308, Number.NEGATIVE_INFINITY, 1e308]) {
        peer.send(FrameType.PING, FLAG_ACK, 0, stamped(stamp));
      }
      await turn();
      assert.equal(pongs, 0);
      assert.equal(peer.mux.lastPingRttMs, undefined);
      assert.equal(peer.mux.isClosed, false);
    } finally {
      await peer.close();
    }
  });
});
