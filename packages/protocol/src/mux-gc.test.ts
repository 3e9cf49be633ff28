import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { inLanes } from '@svcrouter/testkit';
import type { CallbackStream } from './callback-stream.js';
import { muxPair } from './test-support.js';

const MiB = 1024 * 1024;
/** Requests in flight at once: the benchmark's 50 connections. */
const IN_FLIGHT = 50;
const EXCHANGES = 20_000;

/**
 * Guards the choice id-table.ts exists for, at the level where it matters: a session opens and
 * closes a stream per request, and after a full GC a churning Map would keep every stream it
 * ever held alive through its replaced tables until the next full GC (docs/performance.md, "IdTable and Map churn after
 * a full GC"). id-table.test.ts proves the table itself; this proves the session uses it.
 * Measured on this code: 3.7-4.2 MiB of old-space growth over 20,000 exchanges (what the
 * sockets and the session keep in any case). With the session's streams in a Map instead:
 * 18.8-19.3 MiB, three runs each.
 */
describe('a session after a full GC', () => {
  test('lets the streams of finished exchanges die young', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const oldSpaceUsed = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;
    // The acceptor answers every stream as the agent answers a small GET: a head, 100 bytes, the end.
    const body = Buffer.alloc(100, 'a');
    const pair = await muxPair('tcp', {
      acceptor: {
        onStream: (stream: CallbackStream) =>
          stream.attach({
            onEnd: () => {
              stream.sendHeaders({ s: 200, h: ['content-length', '100'] });
              stream.write(body);
              stream.end();
            },
            onReset: () => undefined,
          }),
      },
    });
    try {
      const exchange = (): Promise<void> =>
        new Promise((resolve, reject) => {
          // ~0.5 KB per exchange held by its handler, as the edge's exchange record is.
          const record = new Array(60).fill(0);
          const handler = { record, onData: () => undefined, onEnd: resolve, onReset: reject };
          pair.dialer.open({ m: 'GET', p: '/small', h: ['host', 'example.test'] }, handler, true);
        });
      const run = (count: number): Promise<void> => inLanes(count, IN_FLIGHT, exchange);
      // Warm up first, so that what JIT compilation and the sockets' buffers keep is not counted.
      await run(2_000);
      gc();
      const start = oldSpaceUsed();
      let peak = start;
      for (let done = 0; done < EXCHANGES; done += 2_000) {
        await run(2_000);
        peak = Math.max(peak, oldSpaceUsed());
      }
      assert.equal(pair.dialer.streamCount, 0);
      const growth = peak - start;
      assert.ok(growth < 10 * MiB, `old space grew ${(growth / MiB).toFixed(1)} MiB over ${EXCHANGES} exchanges after a full GC`);
    } finally {
      await pair.close();
    }
  });
});
