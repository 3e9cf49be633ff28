import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterRoute } from '../store/index.js';
import { claimMessage, NOTIFY_PAYLOAD_LIMIT } from './claim-message.js';

const claim = (over: Partial<ClusterRoute> = {}): ClusterRoute => ({
  hostname: 'app.example.test',
  nodeId: 'node-a',
  tunnelId: 'tun_1',
  accountId: 'acc_1',
  localAddr: 'localhost:3000',
  expiresAt: 10_000,
  group: 'agent-1',
  claimedAt: 1,
  ...over,
});

/** `count` routes whose paths are `length` characters and whose locals are `local`. */
const routes = (count: number, length: number, local: string): string =>
  JSON.stringify(Array.from({ length: count }, (_, i) => ({ path: `/${String(i).padStart(2, '0')}${'x'.repeat(length - 3)}`, local })));

describe('claimMessage', () => {
  it('names no routes for a binding without any', () => {
    const message = claimMessage(claim());
    assert.equal('r' in message || 'R' in message, false);
  });

  it('carries routes that fit in a notification inline', () => {
    const message = claimMessage(claim({ routes: routes(2, 8, 'localhost:4000') }));
    assert.deepEqual(message, { ...claimMessage(claim()), r: routes(2, 8, 'localhost:4000') });
  });

  it('sends the other nodes to the row when the message as sent would be too long, escapes and all', () => {
    // The longest tables: 32 routes of 256-character paths. Quotes in a local double when escaped inside the message.
    for (const table of [routes(32, 256, 'localhost:4000'), routes(16, 20, '"'.repeat(200))]) {
      const message = claimMessage(claim({ hostname: `${'h'.repeat(240)}.example.test`, localAddr: 'l'.repeat(200), routes: table }));
      assert.equal((message as { R?: 1 }).R, 1);
      assert.equal('r' in message, false);
      assert.ok(Buffer.byteLength(JSON.stringify(message)) < NOTIFY_PAYLOAD_LIMIT);
    }
  });
});
