import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import type { StreamResetError } from './errors.js';
import type { Mux } from './mux.js';
import { streamDuplex } from './stream-duplex.js';
import { collect, duplexes, muxPair, type MuxPair } from './test-support.js';

/** Resolves once the peer answered a PING: it has read, and we have handled, everything sent before. */
async function roundTrip(mux: Mux): Promise<void> {
  const stamp = mux.ping();
  for (;;) {
    const [, answered] = (await once(mux, 'pong')) as [number, number];
    if (answered === stamp) return;
  }
}

describe('streamDuplex: a Duplex made by the code that pipes bytes', () => {
  const pairs: MuxPair[] = [];
  after(() => Promise.all(pairs.map((pair) => pair.close())));

  test('a stream opened without a handler keeps what arrives (head, body, end) until the Duplex is attached', async () => {
    const pair = await muxPair('chunked', {
      dialer: {
        onStream: duplexes((stream) => {
          stream.sendHeaders({ s: 200 });
          stream.end('early bytes');
        }),
      },
    });
    pairs.push(pair);
    const stream = pair.acceptor.open({ m: 'GET' }, undefined, true);
    await roundTrip(pair.acceptor);
    assert.deepEqual(stream.headers, { s: 200 });
    const duplex = streamDuplex(stream);
    const closed = once(duplex, 'close');
    assert.equal((await collect(duplex)).toString(), 'early bytes');
    // Opened with `end`: the Duplex's write side is finished too, and no second END went out.
    assert.equal(duplex.writableEnded, true);
    await closed;
    assert.equal(pair.acceptor.streamCount, 0);
  });

  test('a reset that came before the Duplex was attached reaches it as an error with its code', async () => {
    const pair = await muxPair('chunked', { dialer: { onStream: duplexes((stream) => stream.reset('NOT_FOUND')) } });
    pairs.push(pair);
    const stream = pair.acceptor.open({ m: 'GET' }, undefined, true);
    await roundTrip(pair.acceptor);
    assert.equal(stream.resetCode, 'NOT_FOUND');
    const duplex = streamDuplex(stream);
    const [error] = (await once(duplex, 'error')) as [StreamResetError];
    assert.equal(error.code, 'NOT_FOUND');
    assert.equal(error.remote, true);
  });

  test('a stream reset here before the Duplex was attached gives a Duplex that closes without an error', async () => {
    const pair = await muxPair('chunked', { dialer: { onStream: duplexes(() => undefined) } });
    pairs.push(pair);
    const stream = pair.acceptor.open({ m: 'GET' });
    stream.reset('CANCEL');
    const duplex = streamDuplex(stream);
    duplex.on('error', (error) => assert.fail(error));
    await once(duplex, 'close');
    assert.equal(duplex.resetCode, 'CANCEL');
  });
});
