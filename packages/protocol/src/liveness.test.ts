import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { agreeHeartbeat, MAX_ASKED_HEARTBEAT_MS, MIN_ASKED_HEARTBEAT_MS } from './handshake.js';
import { unwatchLiveness, watchedSessionCount, watchLiveness, type LivenessWatched } from './liveness.js';

/** A watched session whose peer speaks when told to; resolves `silent` with the time it was declared dead. */
function session(): LivenessWatched & { heard: boolean; silent: Promise<number>; silentCalls: number } {
  let resolve!: (at: number) => void;
  const s = {
    heard: false,
    silentCalls: 0,
    silent: new Promise<number>((r) => (resolve = r)),
    takeHeard() {
      const heard = s.heard;
      s.heard = false;
      return heard;
    },
    onSilent() {
      s.silentCalls++;
      resolve(performance.now());
    },
  };
  return s;
}

describe('liveness sweep', () => {
  // The sweep's timer is unref'd (sockets keep a real process alive): this keeps the test's.
  let alive: NodeJS.Timeout;
  before(() => (alive = setInterval(() => undefined, 1000)));
  after(() => clearInterval(alive));

  it('declares a silent peer dead once, never before the timeout less one sweep period', async () => {
    const timeoutMs = 80;
    const quiet = session();
    const started = performance.now();
    watchLiveness(quiet, timeoutMs);
    const at = await quiet.silent;
    assert.ok(at - started >= timeoutMs - timeoutMs / 8, `declared dead after ${at - started} ms`);
    assert.equal(quiet.silentCalls, 1);
    assert.equal(watchedSessionCount(), 0, 'a dead session is no longer watched, and the sweep stops');
  });

  it('keeps a session whose peer keeps speaking, while a silent one beside it dies', async () => {
    const talking = session();
    const quiet = session();
    const chatter = setInterval(() => (talking.heard = true), 5);
    try {
      watchLiveness(talking, 60);
      watchLiveness(quiet, 60);
      await quiet.silent;
      assert.equal(talking.silentCalls, 0);
      assert.equal(watchedSessionCount(), 1);
    } finally {
      clearInterval(chatter);
      unwatchLiveness(talking);
    }
    assert.equal(watchedSessionCount(), 0);
  });

  it('sessions with different timeouts are swept apart, and an unwatched one is never declared dead', async () => {
    const short = session();
    const long = session();
    const gone = session();
    watchLiveness(short, 40);
    watchLiveness(long, 120);
    watchLiveness(gone, 40);
    unwatchLiveness(gone);
    const shortAt = await short.silent;
    assert.equal(long.silentCalls, 0);
    const longAt = await long.silent;
    assert.ok(longAt > shortAt);
    assert.equal(gone.silentCalls, 0);
  });
});

describe('agreeHeartbeat', () => {
  it("takes the agent's ask within bounds, else the edge's interval", () => {
    assert.equal(agreeHeartbeat(undefined, 5000), 5000);
    assert.equal(agreeHeartbeat('10000', 5000), 10000);
    assert.equal(agreeHeartbeat(String(MIN_ASKED_HEARTBEAT_MS), 5000), MIN_ASKED_HEARTBEAT_MS);
    assert.equal(agreeHeartbeat(String(MAX_ASKED_HEARTBEAT_MS), 5000), MAX_ASKED_HEARTBEAT_MS);
    for (const bad of ['999', '60001', '1e4', ' 2000', '-2000', '2000.5', '', 'ten', ['2000', '3000']]) {
      assert.equal(agreeHeartbeat(bad, 5000), 5000, `ask ${JSON.stringify(bad)}`);
    }
  });
});
