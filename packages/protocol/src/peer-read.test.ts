import assert from 'node:assert/strict';
import { test } from 'node:test';
import { peerHasRead } from './peer-read.js';
import { muxPair } from './test-support.js';

test('peerHasRead answers true only once the peer has read the control messages sent before it', async () => {
  const read: unknown[] = [];
  const mux = await muxPair('tcp', { acceptor: { onControl: (message) => read.push(message) } });
  try {
    for (let i = 0; i < 50; i++) mux.dialer.sendControl({ type: 'unbind', tunnelId: `t${i}` });
    // Nothing is read before the loop turns: the check below is not satisfied by a synchronous read.
    assert.equal(read.length, 0);
    assert.equal(await peerHasRead(mux.dialer, 3000), true);
    assert.equal(read.length, 50);
  } finally {
    await mux.close();
  }
});

test('peerHasRead answers false when the connection closes before the answer', async () => {
  const mux = await muxPair('tcp');
  try {
    const waiting = peerHasRead(mux.dialer);
    mux.dialer.destroy();
    assert.equal(await waiting, false);
  } finally {
    await mux.close();
  }
});

test('peerHasRead answers false after the timeout when the peer never answers', async () => {
  const mux = await muxPair('tcp');
  try {
    // A peer that stops reading cannot answer: its socket is paused under it.
    mux.acceptorSocket.pause();
    assert.equal(await peerHasRead(mux.dialer, 50), false);
  } finally {
    await mux.close();
  }
});
