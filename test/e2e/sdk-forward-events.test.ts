import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { forward, type RequestLog, type TunnelEvents } from '@svcrouter/sdk';
import { originSuite, visit, withRestartableServer } from './harness/index.js';

// The events of the Tunnel that forward() gives, against a real server that stops and comes back:
// one per finished request, the reconnect episode (planned for a restart, not for a crash), the
// same URL once live again, and one 'end' when closed.

describe('forward() tunnel events across a real server restart', () => {
  const system = originSuite();

  for (const stop of ['SIGTERM', 'SIGKILL'] as const) {
    it(`request, reconnecting (${stop === 'SIGTERM' ? 'planned' : 'not planned'}) and reconnected after a ${stop}, then end once on close()`, async () => {
      await withRestartableServer(async (first, restart) => {
        const tunnel = await forward({ addr: system.origin.port, token: first.token!, serverUrl: first.url });
        const url = tunnel.url;
        const ends: Array<TunnelEvents['end'][0]> = [];
        tunnel.on('end', (error) => ends.push(error));
        try {
          const served = once(tunnel, 'request') as Promise<[RequestLog]>;
          assert.equal((await visit(first, tunnel.hostname, '/status/201?before=restart')).status, 201);
          const [log] = await served;
          assert.deepEqual(
            { ...log, durationMs: undefined },
            { method: 'GET', path: '/status/201?before=restart', status: 201, durationMs: undefined },
          );
          assert.ok(log.durationMs >= 0);

          const reconnecting = once(tunnel, 'reconnecting') as Promise<TunnelEvents['reconnecting']>;
          await first.proc.kill(stop);
          const [info] = await reconnecting;
          assert.equal(info.attempt, 1);
          assert.equal(info.planned, stop === 'SIGTERM', info.reason);
          assert.ok(info.reason.length > 0);
          assert.ok(info.delayMs >= 0);

          const reconnected = once(tunnel, 'reconnected') as Promise<TunnelEvents['reconnected']>;
          const second = await restart();
          assert.deepEqual(await reconnected, [url], 'the same URL once live again');
          assert.equal(tunnel.url, url);
          const again = once(tunnel, 'request') as Promise<[RequestLog]>;
          assert.equal((await visit(second, tunnel.hostname, '/after')).status, 200);
          assert.equal((await again)[0].path, '/after');
          assert.deepEqual(ends, [], 'no end while it reconnects');
        } finally {
          await tunnel.close();
        }
        await tunnel.close();
        assert.deepEqual(ends, [undefined], "one 'end', without an error, after close()");
      });
    });
  }
});
