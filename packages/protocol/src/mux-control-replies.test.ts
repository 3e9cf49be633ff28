import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import { FrameType, ProtocolError, encodeFrame } from './frame.js';
import { CONTROL_REPLY_BUDGET, Mux } from './mux.js';
import { chunkedPair, tcpPair, type SocketPair } from './test-support.js';

/** Bounds a session that is never closed (the failure this guards against); not a timing assertion. */
const HANG = { timeout: 30_000 };

/** Yields to the event loop, so the session reads what was written and answers it. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

// A peer that asks for replies (PING echoes, WINDOW credit, REFUSED resets) and never reads
// them must lose its session, not make it queue replies without end.

describe('replies to a peer that reads nothing', () => {
  const pairs: SocketPair[] = [];
  after(() => Promise.all(pairs.map((pair) => pair.close())));

  test('a flood of pings closes the session once the unread echoes pass the budget', HANG, async () => {
    // Real TCP, whose kernel buffers take some echoes before the session's own queue grows.
    const pair = await tcpPair();
    pairs.push(pair);
    const mux = new Mux(pair.acceptorSocket, { role: 'acceptor' });
    pair.dialerSocket.pause();
    let closedWith: Error | undefined;
    let closed = false;
    mux.once('close', (error?: Error) => {
      closed = true;
      closedWith = error;
    });
    const burst = Buffer.concat(Array.from({ length: 4096 }, () => encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(8))));
    let sent = 0;
    // Up to 64 times the budget in pings; the session must give up long before.
    while (!closed && sent < 64 * CONTROL_REPLY_BUDGET) {
      pair.dialerSocket.write(burst);
      sent += burst.length;
      await turn();
    }
    assert.ok(closed, `still open after ${sent} bytes of pings`);
    assert.ok(closedWith instanceof ProtocolError, String(closedWith));
    assert.match(closedWith.message, /reads nothing/);
    assert.ok(pair.acceptorSocket.writableLength < 2 * CONTROL_REPLY_BUDGET, `${pair.acceptorSocket.writableLength} bytes queued`);
  });

  test('a PING larger than its 8 bytes is a protocol error, not a megabyte echo', HANG, async () => {
    const pair = await tcpPair();
    pairs.push(pair);
    const mux = new Mux(pair.acceptorSocket, { role: 'acceptor' });
    pair.dialerSocket.pause();
    const closing = once(mux, 'close');
    pair.dialerSocket.write(encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(4 * 1024 * 1024)));
    const [error] = (await closing) as [Error];
    assert.ok(error instanceof ProtocolError);
    assert.match(error.message, /PING frame of 4194304 bytes/);
  });

  test('a flood of OPENs on a side that refuses streams closes the session once the unread resets pass the budget', HANG, async () => {
    const pair = chunkedPair(9, 64 * 1024);
    pairs.push(pair);
    const mux = new Mux(pair.acceptorSocket, { role: 'acceptor' });
    pair.dialerSocket.pause();
    let closed = false;
    mux.once('close', () => (closed = true));
    let id = 1;
    while (!closed && id < 2_000_000) {
      const opens: Buffer[] = [];
      for (let i = 0; i < 2048; i++, id += 2) opens.push(encodeFrame(FrameType.OPEN, 0, id, Buffer.from('{}')));
      pair.dialerSocket.write(Buffer.concat(opens));
      await turn();
    }
    assert.ok(closed, `still open after ${(id - 1) / 2} refused streams`);
  });

  for (const kind of ['tcp', 'chunked'] as const) {
    test(`a peer that reads keeps its session through as many pings (${kind})`, HANG, async () => {
      const pair = kind === 'tcp' ? await tcpPair() : chunkedPair(11, 64 * 1024);
      pairs.push(pair);
      const mux = new Mux(pair.acceptorSocket, { role: 'acceptor' });
      let echoed = 0;
      pair.dialerSocket.on('data', (chunk: Buffer) => (echoed += chunk.length));
      const burst = Buffer.concat(Array.from({ length: 4096 }, () => encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(8))));
      for (let sent = 0; sent < 8 * CONTROL_REPLY_BUDGET; sent += burst.length) {
        pair.dialerSocket.write(burst);
        await turn();
      }
      assert.equal(mux.isClosed, false);
      assert.ok(echoed > 0);
    });
  }
});
