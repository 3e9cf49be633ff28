import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import type { CallbackStream } from './callback-stream.js';
import { ResetCode } from './messages.js';
import type { Mux } from './mux.js';
import { streamDuplex } from './stream-duplex.js';
import { collect, duplexes, muxPair, openDuplex, type MuxPair } from './test-support.js';

// A handler or listener that throws outside the frame being handled — on data delivered by a
// later resume(), on an 'end' Node emits a tick later, on a drain of the session socket — must
// end its own stream as one that throws on a frame does: never the session, never the process
// (an exception escaping there would be uncaught, and the test runner reports those).

/** Resolves with the next 'streamError' of `mux` and the id it names. */
function streamError(mux: Mux): Promise<[Error, number]> {
  return once(mux, 'streamError') as Promise<[Error, number]>;
}

/** The session still serves: a fresh stream gets its answer. */
async function stillServes(pair: MuxPair): Promise<void> {
  assert.equal(pair.dialer.isClosed, false);
  assert.equal(pair.acceptor.isClosed, false);
  const healthy = openDuplex(pair.acceptor, { echo: true }, true);
  assert.equal((await collect(healthy)).toString(), 'fine');
}

describe('a stream handler that throws outside the frame it was handed', () => {
  const pairs: MuxPair[] = [];
  after(() => Promise.all(pairs.map((pair) => pair.close())));

  /** A pair whose dialer answers `{ echo: true }` streams with "fine" and hands others to `onOther`. */
  async function pairWith(onOther: (stream: CallbackStream) => void): Promise<MuxPair> {
    const pair = await muxPair('tcp', {
      dialer: {
        onStream: (stream) => {
          if ((stream.meta as { echo?: boolean }).echo) streamDuplex(stream).end('fine');
          else onOther(stream);
        },
      },
    });
    pairs.push(pair);
    return pair;
  }

  test('onData on data that waited while paused, delivered by resume(): resume() does not throw, the stream is reset', async () => {
    let stream: CallbackStream | undefined;
    let markArrived: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (markArrived = resolve));
    const pair = await pairWith((s) => {
      stream = s;
      s.pause();
      s.attach({
        onReset: () => undefined,
        onData: () => {
          throw new Error('late data bug');
        },
      });
      markArrived();
    });
    const peer = openDuplex(pair.acceptor, {});
    peer.write('waits');
    await arrived;
    await new Promise((resolve) => setImmediate(resolve));
    const failed = streamError(pair.dialer);
    assert.doesNotThrow(() => stream!.resume());
    const [error, id] = await failed;
    assert.equal(error.message, 'late data bug');
    assert.equal(id, stream!.id);
    assert.equal(stream!.resetCode, ResetCode.STREAM_FAILED);
    await stillServes(pair);
  });

  test('attach() delivering what arrived before it: the throw ends the stream, not the caller', async () => {
    const pair = await pairWith((s) => {
      // Attached a turn later, as an owner that looks something up first would.
      setImmediate(() =>
        s.attach({
          onReset: () => undefined,
          onEnd: () => {
            throw new Error('end bug');
          },
        }),
      );
    });
    const failed = streamError(pair.dialer);
    openDuplex(pair.acceptor, {}, true).on('error', () => undefined);
    const [error] = await failed;
    assert.equal(error.message, 'end bug');
    await stillServes(pair);
  });

  test('onDrain, called when the session socket drains: the stream is reset, other streams keep flowing', async () => {
    let stream: CallbackStream | undefined;
    let markWritten: () => void = () => undefined;
    const written = new Promise<void>((resolve) => (markWritten = resolve));
    const pair = await muxPair('tcp', {
      window: 4 * 1024 * 1024,
      dialer: {
        onStream: (s) => {
          if ((s.meta as { echo?: boolean }).echo) {
            streamDuplex(s).end('fine');
            return;
          }
          stream = s;
          s.attach({
            onReset: () => undefined,
            onDrain: () => {
              throw new Error('drain bug');
            },
          });
          s.sendHeaders({ s: 200 });
          // Within the credit, but far above the session's write high-water mark while the peer
          // reads nothing: write() waits for the session socket to drain.
          assert.equal(s.write(Buffer.alloc(4 * 1024 * 1024)), false);
          markWritten();
        },
      },
    });
    pairs.push(pair);
    const big = openDuplex(pair.acceptor, {});
    big.on('error', () => undefined);
    await written;
    pair.acceptorSocket.pause();
    await new Promise((resolve) => setImmediate(resolve));
    const failed = streamError(pair.dialer);
    pair.acceptorSocket.resume();
    big.resume();
    const [error] = await failed;
    assert.equal(error.message, 'drain bug');
    assert.equal(stream!.resetCode, ResetCode.STREAM_FAILED);
    await stillServes(pair);
  });

  test("a StreamDuplex 'data' listener on data delivered after a pause, and an 'end' listener (emitted a tick later)", async () => {
    const pair = await muxPair('tcp', {
      dialer: {
        onStream: duplexes((stream) => {
          if ((stream.meta as { echo?: boolean }).echo) return void stream.end('fine');
          stream.end('some bytes');
        }),
      },
    });
    pairs.push(pair);
    const paused = openDuplex(pair.acceptor, {}, true);
    paused.pause();
    paused.on('error', () => undefined);
    await once(paused, 'readable');
    const dataFailure = streamError(pair.acceptor);
    paused.on('data', () => {
      throw new Error('data listener bug');
    });
    paused.resume();
    assert.equal((await dataFailure)[0].message, 'data listener bug');

    const ending = openDuplex(pair.acceptor, {}, true);
    ending.on('error', () => undefined);
    ending.resume();
    const endFailure = streamError(pair.acceptor);
    ending.on('end', () => {
      throw new Error('end listener bug');
    });
    assert.equal((await endFailure)[0].message, 'end listener bug');
    await stillServes(pair);
  });
});
