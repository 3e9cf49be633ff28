import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import { INITIAL_STREAM_WINDOW } from './mux.js';
import type { StreamDuplex } from './stream-duplex.js';
import { MAX_STREAM_WINDOW } from './mux-window.js';
import { TRANSPORTS, collect, duplexes, muxPair, openDuplex, sha256, writeAll, type MuxPair } from './test-support.js';

const MiB = 1024 * 1024;

/**
 * Reads at most four 16 KiB pieces per macrotask (the next batch waits for setImmediate), so the
 * sender outruns the reader. Checks before every batch that neither the readable buffer nor the
 * stream's flow-control accounting ever holds more than its receive window, and that the window
 * never grew past `maxWindow` (this reader is quick enough between batches to grow it).
 */
function slowRead(stream: StreamDuplex, maxWindow: number): Promise<{ digest: string; maxBuffered: number }> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    let maxBuffered = 0;
    let scheduled = false;
    const pump = (): void => {
      scheduled = false;
      maxBuffered = Math.max(maxBuffered, stream.readableLength);
      const window = stream.receiveWindowBytes;
      if (stream.readableLength > window || stream.receiveBuffered > window || window > maxWindow) {
        reject(new Error(`buffered ${stream.readableLength}/${stream.receiveBuffered} bytes, window ${window} of at most ${maxWindow}`));
        return;
      }
      for (let i = 0; i < 4; i++) {
        const chunk = (stream.read(16 * 1024) ?? stream.read()) as Buffer | null;
        if (chunk === null) return; // 'readable' schedules the next batch
        hash.update(chunk);
      }
      schedule();
    };
    const schedule = (): void => {
      if (scheduled) return;
      scheduled = true;
      setImmediate(pump);
    };
    stream.on('readable', schedule);
    stream.on('end', () => resolve({ digest: hash.digest('hex'), maxBuffered }));
    stream.on('error', reject);
  });
}

/** Answers every stream with a head and `bodies[meta.name]`; records when each writer finished. */
function serveBodies(bodies: Record<string, Buffer>, writersDone: Set<string>, failures: Error[]) {
  return (stream: StreamDuplex): void => {
    const name = (stream.meta as { name: string }).name;
    stream.sendHeaders({ s: 200 });
    writeAll(stream, bodies[name]!).then(
      () => writersDone.add(name),
      (error: Error) => failures.push(error),
    );
  };
}

for (const kind of TRANSPORTS) {
  describe(`flow control over ${kind}`, () => {
    const pairs: MuxPair[] = [];
    after(() => Promise.all(pairs.map((p) => p.close())));

    test('8 MiB to a slow reader arrives intact and never exceeds its window in memory', async () => {
      const body = randomBytes(8 * MiB);
      const done = new Set<string>();
      const failures: Error[] = [];
      const pair = await muxPair(kind, { dialer: { onStream: duplexes(serveBodies({ big: body }, done, failures)) } });
      pairs.push(pair);
      const stream = openDuplex(pair.acceptor, { name: 'big' }, true);
      await once(stream, 'headers');
      const { digest, maxBuffered } = await slowRead(stream, MAX_STREAM_WINDOW);
      assert.equal(digest, sha256(body));
      assert.ok(maxBuffered > 0, 'the reader was slow enough for data to queue');
      assert.deepEqual(failures, []);
      assert.equal(pair.acceptor.streamCount, 0);
    });

    test('8 MiB request body to a slow reader on the agent arrives intact', async () => {
      const body = randomBytes(8 * MiB);
      let result!: Promise<{ digest: string; maxBuffered: number }>;
      const pair = await muxPair(kind, {
        dialer: {
          onStream: duplexes((stream) => {
            result = slowRead(stream, MAX_STREAM_WINDOW);
            void result.then(
              ({ digest }) => stream.sendHeaders({ digest }, true),
              () => stream.reset('FAILED'),
            );
          }),
        },
      });
      pairs.push(pair);
      const stream = openDuplex(pair.acceptor, {});
      const headers = once(stream, 'headers');
      await writeAll(stream, body);
      const [head] = (await headers) as [{ digest: string }];
      assert.equal(head.digest, sha256(body));
      stream.resume();
    });

    test('a paused stream does not block a sibling stream (no head-of-line blocking)', async () => {
      const bodies = { a: randomBytes(4 * MiB), b: randomBytes(4 * MiB) };
      const done = new Set<string>();
      const failures: Error[] = [];
      const pair = await muxPair(kind, { dialer: { onStream: duplexes(serveBodies(bodies, done, failures)) } });
      pairs.push(pair);
      const a = openDuplex(pair.acceptor, { name: 'a' }, true);
      const b = openDuplex(pair.acceptor, { name: 'b' }, true);
      await Promise.all([once(a, 'headers'), once(b, 'headers')]);
      // Nobody reads `a` while `b` moves its whole body.
      assert.equal(sha256(await collect(b)), sha256(bodies.b));
      assert.ok(done.has('b'), 'the sibling writer finished');
      assert.ok(!done.has('a'), 'the writer of the paused stream is held back by its window');
      assert.ok(a.readableLength <= INITIAL_STREAM_WINDOW, 'paused readable buffer within the window');
      assert.ok(a.receiveBuffered <= INITIAL_STREAM_WINDOW, 'paused stream accounting within the window');
      assert.equal(a.receiveWindowBytes, INITIAL_STREAM_WINDOW, 'a reader that takes nothing never grows its window');
      // Now `a` resumes and completes.
      assert.equal(sha256(await collect(a)), sha256(bodies.a));
      assert.deepEqual(failures, []);
      assert.equal(pair.dialer.streamCount, 0);
      assert.equal(pair.acceptor.streamCount, 0);
    });

    for (const window of [7, 1024]) {
      test(`a reader asking for more than the ${window}-byte window per read() still gets everything`, async () => {
        const body = randomBytes(64 * 1024);
        const pair = await muxPair(kind, { window, dialer: { onStream: duplexes(serveBodies({ body }, new Set(), [])) } });
        pairs.push(pair);
        const stream = openDuplex(pair.acceptor, { name: 'body' }, true);
        await once(stream, 'headers');
        // read(16 KiB) on a full 7-byte buffer returns null, then read() drains it without a _read call.
        const { digest } = await slowRead(stream, window);
        assert.equal(digest, sha256(body));
      });
    }

    for (const [window, size] of [
      [1024, 1 * MiB],
      [7, 128 * 1024],
      [1, 64 * 1024],
    ] as const) {
      test(`a ${window}-byte window still echoes ${size / 1024} KiB both ways`, async () => {
        const pair = await muxPair(kind, {
          window,
          dialer: {
            onStream: duplexes((stream) => {
              stream.sendHeaders({ s: 200 });
              stream.pipe(stream); // echo: the read side feeds the write side, with backpressure
            }),
          },
        });
        pairs.push(pair);
        const body = randomBytes(size);
        const stream = openDuplex(pair.acceptor, {});
        const [echoed] = await Promise.all([collect(stream), writeAll(stream, body, 4096)]);
        assert.equal(sha256(echoed), sha256(body));
        assert.equal(pair.acceptor.streamCount, 0);
        assert.equal(pair.dialer.streamCount, 0);
      });
    }
  });
}
