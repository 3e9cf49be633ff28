import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import { StreamResetError } from './errors.js';
import { ResetCode } from './messages.js';
import type { StreamDuplex } from './stream-duplex.js';
import { TRANSPORTS, collect, duplexes, muxPair, openDuplex, type MuxPair } from './test-support.js';

/** The reset code a stream ended with, once it has ended one way or the other. */
function outcome(stream: StreamDuplex): Promise<string> {
  return new Promise((resolve) => {
    stream.on('error', (error) => resolve(error instanceof StreamResetError ? error.code : String(error)));
    stream.on('end', () => resolve('end'));
  });
}

for (const kind of TRANSPORTS) {
  describe(`a stream handler that throws over ${kind}`, () => {
    const pairs: MuxPair[] = [];
    after(() => Promise.all(pairs.map((pair) => pair.close())));

    test('resets only that stream when onStream throws; the session and its other streams carry on', async () => {
      const failures: unknown[] = [];
      const pair = await muxPair(kind, {
        dialer: {
          onStream: duplexes((stream) => {
            if ((stream.meta as { boom?: boolean }).boom) throw new TypeError('Invalid URL');
            stream.end('fine');
          }),
        },
      });
      pairs.push(pair);
      pair.dialer.on('streamError', (error) => failures.push(error));
      const failed = openDuplex(pair.acceptor, { boom: true }, true);
      const healthy = openDuplex(pair.acceptor, {}, true);
      assert.equal(await outcome(failed), ResetCode.STREAM_FAILED);
      assert.equal((await collect(healthy)).toString(), 'fine');
      assert.equal(pair.dialer.isClosed, false);
      assert.equal(pair.acceptor.isClosed, false);
      assert.equal((failures[0] as Error).message, 'Invalid URL');
      // A stream opened after the failure is served too.
      const later = openDuplex(pair.acceptor, {}, true);
      assert.equal((await collect(later)).toString(), 'fine');
    });

    test('resets only that stream when a CallbackStream handler throws on a frame', async () => {
      const pair = await muxPair(kind, {
        dialer: {
          onStream: (stream) => {
            stream.attach({
              onReset: () => undefined,
              onData: () => {
                throw new Error('handler bug');
              },
            });
          },
        },
      });
      pairs.push(pair);
      const stream = openDuplex(pair.acceptor, {});
      stream.write('x');
      assert.equal(await outcome(stream), ResetCode.STREAM_FAILED);
      assert.equal(pair.dialer.isClosed, false);
    });

    test('resets only that stream when a listener of its response head throws', async () => {
      const pair = await muxPair(kind, { dialer: { onStream: duplexes((stream) => stream.sendHeaders({ s: 200 }, true)) } });
      pairs.push(pair);
      const stream = openDuplex(pair.acceptor, {}, true);
      stream.on('headers', () => {
        throw new Error('listener bug');
      });
      const [error] = (await once(pair.acceptor, 'streamError')) as [Error];
      assert.equal(error.message, 'listener bug');
      assert.equal(pair.acceptor.isClosed, false);
      const healthy = openDuplex(pair.acceptor, {}, true);
      healthy.on('headers', () => undefined);
      await once(healthy, 'headers');
    });
  });
}
