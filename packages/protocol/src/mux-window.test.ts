import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { after, describe, test } from 'node:test';
import { INITIAL_STREAM_WINDOW, Mux } from './mux.js';
import type { StreamDuplex } from './stream-duplex.js';
import { GROW_WITHIN_MS, MAX_STREAM_WINDOW, WindowTuner } from './mux-window.js';
import { TRANSPORTS, duplexes, muxPair, openDuplex, sha256, writeAll, type MuxPair } from './test-support.js';

const MiB = 1024 * 1024;

describe('WindowTuner', () => {
  test('doubles the window of a reader that took it within GROW_WITHIN_MS, and only then', () => {
    const tuner = new WindowTuner(16 * MiB, 64 * MiB);
    assert.equal(tuner.grow(MiB, GROW_WITHIN_MS), 2 * MiB);
    assert.equal(tuner.grow(MiB, GROW_WITHIN_MS + 1), MiB, 'a slower reader keeps its window');
    assert.equal(tuner.grantedBytes, MiB);
  });

  test('on a long round trip, a window taken within four round trips still grows', () => {
    const tuner = new WindowTuner(16 * MiB, 64 * MiB);
    tuner.rttMs = 100;
    assert.equal(tuner.grow(MiB, 390), 2 * MiB, 'the window, not the reader, was the limit');
    assert.equal(tuner.grow(MiB, 410), MiB);
  });

  test('never grows past maxWindow', () => {
    const tuner = new WindowTuner(16 * MiB, 64 * MiB);
    assert.equal(tuner.grow(12 * MiB, 0), 16 * MiB);
    assert.equal(tuner.grow(16 * MiB, 0), 16 * MiB);
    assert.equal(tuner.grantedBytes, 4 * MiB);
  });

  test('grants no more than the budget has left, and released growth can be granted again', () => {
    const tuner = new WindowTuner(16 * MiB, 3 * MiB);
    assert.equal(tuner.grow(MiB, 0), 2 * MiB);
    assert.equal(tuner.grow(2 * MiB, 0), 4 * MiB);
    assert.equal(tuner.grow(MiB, 0), MiB, 'budget spent');
    tuner.release(MiB);
    assert.equal(tuner.grow(MiB, 0), 2 * MiB);
    assert.equal(tuner.grantedBytes, 3 * MiB);
  });

  test('a session refuses a maxWindow below its window', () => {
    assert.throws(
      () => new Mux(new PassThrough(), { role: 'dialer', window: 1024, maxWindow: 512 }),
      /maxWindow must be an integer from window to 2\^31-1, got 512/,
    );
    const fixed = new Mux(new PassThrough(), { role: 'dialer', window: 1024, maxWindow: 4096 });
    assert.equal(fixed.windowTuner?.maxWindow, 4096, 'an explicit window grows when maxWindow says so');
    fixed.destroy();
  });
});

/** Reads `stream` to its end as fast as it comes; resolves with the body and the largest receive window seen. */
function readRecordingWindow(stream: StreamDuplex): Promise<{ body: Buffer; largestWindow: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let largestWindow = stream.receiveWindowBytes;
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      largestWindow = Math.max(largestWindow, stream.receiveWindowBytes);
    });
    stream.on('end', () => resolve({ body: Buffer.concat(chunks), largestWindow }));
    stream.on('error', reject);
  });
}

/** A pair whose dialer answers every stream with `body`. */
async function servingPair(
  kind: (typeof TRANSPORTS)[number],
  body: Buffer,
  acceptor: { windowGrowthBudget?: number } = {},
): Promise<MuxPair> {
  return muxPair(kind, {
    acceptor,
    dialer: {
      onStream: duplexes((stream) => {
        stream.sendHeaders({ s: 200 });
        void writeAll(stream, body);
      }),
    },
  });
}

for (const kind of TRANSPORTS) {
  describe(`receive windows grow for readers that keep up, over ${kind}`, () => {
    const pairs: MuxPair[] = [];
    after(() => Promise.all(pairs.map((p) => p.close())));

    test('a reader that keeps up grows its window up to MAX_STREAM_WINDOW, and the growth is returned when it closes', async () => {
      const body = randomBytes(40 * MiB);
      const pair = await servingPair(kind, body);
      pairs.push(pair);
      const tuner = pair.acceptor.windowTuner!;
      // A long measured round trip makes "within four round trips" hold whatever this machine's
      // speed: the test is about what growth does, the timing rule is tested above.
      tuner.rttMs = 60_000;
      const stream = openDuplex(pair.acceptor, {}, true);
      const { body: received, largestWindow } = await readRecordingWindow(stream);
      assert.equal(sha256(received), sha256(body));
      assert.ok(largestWindow > INITIAL_STREAM_WINDOW, `window grew (largest ${largestWindow})`);
      assert.ok(largestWindow <= MAX_STREAM_WINDOW, `window stayed within the cap (largest ${largestWindow})`);
      if (!stream.closed) await once(stream, 'close');
      assert.equal(tuner.grantedBytes, 0, 'growth returned to the session');
    });

    test('streams of one session grow no further together than its budget', async () => {
      const body = randomBytes(12 * MiB);
      const budget = 3 * MiB;
      const pair = await servingPair(kind, body, { windowGrowthBudget: budget });
      pairs.push(pair);
      const tuner = pair.acceptor.windowTuner!;
      tuner.rttMs = 60_000;
      const streams = [openDuplex(pair.acceptor, {}, true), openDuplex(pair.acceptor, {}, true), openDuplex(pair.acceptor, {}, true)];
      let mostGranted = 0;
      const reads = streams.map((stream) => {
        stream.on('data', () => {
          const held = streams.reduce((sum, s) => sum + (s.destroyed ? 0 : s.receiveWindowBytes - INITIAL_STREAM_WINDOW), 0);
          assert.ok(held <= budget, `streams hold ${held} bytes of growth, budget ${budget}`);
          mostGranted = Math.max(mostGranted, tuner.grantedBytes);
        });
        return readRecordingWindow(stream);
      });
      for (const { body: received } of await Promise.all(reads)) assert.equal(sha256(received), sha256(body));
      assert.ok(mostGranted > 0 && mostGranted <= budget, `granted at most ${mostGranted} of ${budget}`);
      await Promise.all(streams.filter((s) => !s.closed).map((s) => once(s, 'close')));
      assert.equal(tuner.grantedBytes, 0);
    });

    test('a session with an explicit window keeps every window fixed', async () => {
      const pair = await muxPair(kind, { window: 64 * 1024 });
      pairs.push(pair);
      assert.equal(pair.acceptor.windowTuner, undefined);
      assert.equal(pair.dialer.windowTuner, undefined);
    });
  });
}
