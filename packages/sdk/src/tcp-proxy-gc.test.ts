import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { tcpHead, type Mux } from '@svcrouter/protocol';
import { inLanes } from '@svcrouter/testkit';
import { TcpProxy } from './tcp-proxy.js';
import { proxySession, startEchoService, type EchoService, type ProxySession } from './tcp-proxy-test-support.js';

const MiB = 1024 * 1024;
/** Connections open at once: the benchmark's connections row. */
const IN_FLIGHT = 32;
const CONNECTIONS = 10_000;
const BATCH = 2_000;
/**
 * Promoted per connection above this, the sockets of closed connections are being kept: halfway
 * between this code and the open sockets in a Set (docs/performance.md, "The open-socket sets").
 */
const PROMOTED_BYTES_PER_CONNECTION = 2_500;

/**
 * Guards what id-table.ts exists for on a TCP tunnel's agent: each visitor connection adds its
 * local socket to the proxy's open set and removes it on close. A churning Set, once a full GC
 * has promoted its table, keeps every socket it ever held (with its streams, buffers and
 * listeners) alive through scavenges until the next full GC (docs/performance.md, "IdTable and
 * Map churn after a full GC"). Each connection here is the benchmark's: one byte each way, then
 * a FIN each way, against a real local echo service over a real session on loopback.
 */
describe('a TCP tunnel after a full GC', () => {
  let service: EchoService;
  let session: ProxySession;
  let edge: Mux;

  before(async () => {
    service = await startEchoService();
    session = await proxySession(new TcpProxy(service.target, () => undefined));
    edge = session.edge;
  });

  after(async () => {
    await session.close();
    await service.close();
  });

  /** One visitor connection as the edge carries it: a TCP head, one byte, the end; done when the echo and its end came back. */
  const connection = (): Promise<void> =>
    new Promise((resolve, reject) => {
      let echoed = 0;
      const stream = edge.open(tcpHead('t1', '203.0.113.7:40000', 20000), {
        onData: (chunk: Buffer) => (echoed += chunk.length),
        onEnd: () => {
          if (echoed === 1) resolve();
          else reject(new Error(`echoed ${echoed} bytes of 1`));
        },
        onReset: reject,
      });
      stream.write(Buffer.of(0x2a));
      stream.end();
    });

  const run = (count: number): Promise<void> => inLanes(count, IN_FLIGHT, connection);

  test('lets the sockets of closed connections die young', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // Warm up first, so that what JIT compilation and the sockets' buffers keep is not counted.
    await run(BATCH);
    gc();
    const profiler = new v8.GCProfiler();
    profiler.start();
    await run(CONNECTIONS);
    const promoted = promotedByScavenges(profiler.stop().statistics);
    const perConnection = promoted / CONNECTIONS;
    assert.ok(
      perConnection < PROMOTED_BYTES_PER_CONNECTION,
      `scavenges promoted ${(promoted / MiB).toFixed(1)} MiB over ${CONNECTIONS} connections after a full GC (${perConnection.toFixed(0)} bytes each)`,
    );
  });
});

/** Old-space bytes the scavenges added: what they promoted (a full GC's own changes are left out). */
function promotedByScavenges(statistics: ReturnType<v8.GCProfiler['stop']>['statistics']): number {
  const oldSpace = (stats: (typeof statistics)[number]['beforeGC']) =>
    stats.heapSpaceStatistics.find((space) => space.spaceName === 'old_space')!.spaceUsedSize;
  let promoted = 0;
  for (const gc of statistics) if (gc.gcType === 'Scavenge') promoted += oldSpace(gc.afterGC) - oldSpace(gc.beforeGC);
  return promoted;
}
