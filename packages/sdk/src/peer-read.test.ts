import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { Mux } from '@svcrouter/protocol';
import { peerHasRead } from './peer-read.js';

/** A dialer and an acceptor Mux over loopback TCP; `onControl` sees what the acceptor reads. */
async function pair(onControl: (message: unknown) => void): Promise<{ dialer: Mux; acceptor: Mux; close(): Promise<void> }> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const accepted = once(server, 'connection') as Promise<[net.Socket]>;
  const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  const [[acceptorSocket]] = await Promise.all([accepted, once(socket, 'connect')]);
  const dialer = new Mux(socket, { role: 'dialer' });
  const acceptor = new Mux(acceptorSocket, { role: 'acceptor', onControl });
  return {
    dialer,
    acceptor,
    async close() {
      dialer.destroy();
      acceptor.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test('peerHasRead resolves only once the peer has read the control messages sent before it', async () => {
  const read: unknown[] = [];
  const mux = await pair((message) => read.push(message));
  try {
    for (let i = 0; i < 50; i++) mux.dialer.sendControl({ type: 'unbind', tunnelId: `t${i}` });
    // Nothing is read before the loop turns: the check below is not satisfied by a synchronous read.
    assert.equal(read.length, 0);
    await peerHasRead(mux.dialer, 3000);
    assert.equal(read.length, 50);
  } finally {
    await mux.close();
  }
});

test('peerHasRead resolves when the connection closes before the answer', async () => {
  const mux = await pair(() => undefined);
  try {
    const waiting = peerHasRead(mux.dialer, 60_000);
    mux.dialer.destroy();
    await waiting;
  } finally {
    await mux.close();
  }
});
