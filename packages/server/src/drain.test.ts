import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EdgeMessage } from '@svcrouter/protocol';
import { drainSessions, LEAVING_MESSAGE, tellLeaving, type DrainableSession } from './drain.js';

/** A session as the drain sees it, whose tunnels and streams the test moves by hand. */
function fakeSession(bindings: Array<{ group?: string }>, streams = 0) {
  const sent: EdgeMessage[] = [];
  const session = {
    sent,
    isClosed: false,
    mux: { streamCount: streams },
    bindings: new Map(bindings.map((binding, index) => [`tun_${index}`, binding])),
    send: (message: EdgeMessage) => void sent.push(message),
  };
  return session satisfies DrainableSession;
}

describe('drainSessions', () => {
  it('tells every agent, waits for those on several nodes to unbind here, then for the streams', async () => {
    const moving = fakeSession([{ group: 'agent-1' }], 1);
    const alone = fakeSession([{}]);
    tellLeaving([moving, alone]);
    const drained = drainSessions(() => [moving, alone], 10_000);
    assert.deepEqual(moving.sent, [{ type: 'leaving', message: LEAVING_MESSAGE }]);
    assert.deepEqual(alone.sent, [{ type: 'leaving', message: LEAVING_MESSAGE }]);
    // The agent bound elsewhere and unbinds here; its request in flight finishes after.
    setTimeout(() => {
      moving.bindings.clear();
      setTimeout(() => (moving.mux.streamCount = 0), 50);
    }, 50);
    const outcome = await drained;
    assert.equal(outcome.unmoved, 0);
    assert.equal(outcome.streamsLeft, 0);
    assert.ok(outcome.waitedMs < 10_000);
  });

  it('counts requests carried to other nodes as in flight', async () => {
    let carried = 2;
    setTimeout(() => (carried = 0), 50);
    const outcome = await drainSessions(
      () => [fakeSession([])],
      10_000,
      () => carried,
    );
    assert.equal(outcome.streamsLeft, 0);
    assert.equal(carried, 0);
  });

  it('gives up at the drain time, reporting the tunnels not moved and the streams left', async () => {
    const stuck = fakeSession([{ group: 'agent-1' }, { group: 'agent-1' }], 3);
    const outcome = await drainSessions(() => [stuck], 100);
    assert.equal(outcome.unmoved, 2);
    assert.equal(outcome.streamsLeft, 3);
  });
});
