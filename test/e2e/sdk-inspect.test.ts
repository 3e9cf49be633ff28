import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { forward, ReplayError, type InspectedRequest } from '@svcrouter/sdk';
import { serverSuite, visit } from './harness/index.js';

// An application that calls forward() can capture and replay its own traffic.
describe('SDK capture and replay', () => {
  const system = serverSuite();

  it('forward({ inspect }) captures bounded bodies, flags truncation, and replays with a new body', async () => {
    const { server, origin } = system;
    const tunnel = await forward({ addr: origin.port, token: server.token!, serverUrl: server.url, inspect: { maxBodyBytes: 16 } });
    try {
      const captured = once(tunnel.inspector!, 'request') as Promise<[InspectedRequest]>;
      await visit(server, tunnel.hostname, '/echo', { method: 'POST', body: 'x'.repeat(100) });
      const [record] = await captured;
      assert.deepEqual(tunnel.inspector!.list(), [record]);
      assert.equal(record.request.body.size, 100);
      assert.equal(record.request.body.truncated, true);
      assert.equal(Buffer.from(record.request.body.base64, 'base64').toString(), 'x'.repeat(16));
      assert.equal(record.response!.body.truncated, true);
      await assert.rejects(
        tunnel.inspector!.replay(record.id),
        (error: unknown) => error instanceof ReplayError && error.code === 'BODY_TRUNCATED',
      );
      const replayed = await tunnel.inspector!.replay(record.id, { body: 'short' });
      assert.equal(replayed.replayOf, record.id);
      assert.equal(replayed.status, 200);
      assert.equal(replayed.request.body.size, 5);
      assert.equal(origin.seen.at(-1)!.method, 'POST');
    } finally {
      await tunnel.close();
    }
  });

  it('without inspect a tunnel captures nothing and has no inspector', async () => {
    const { server, origin } = system;
    const tunnel = await forward({ addr: origin.port, token: server.token!, serverUrl: server.url });
    try {
      assert.equal(tunnel.inspector, undefined);
      assert.equal((await visit(server, tunnel.hostname, '/echo')).status, 200);
    } finally {
      await tunnel.close();
    }
  });
});
