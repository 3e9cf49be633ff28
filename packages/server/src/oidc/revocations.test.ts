import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { OidcRevocation, OidcSessionsRepo } from '../store/index.js';
import { REVOCATIONS_STALE_MS, Revocations } from './revocations.js';

/** The revocation rows of a store in memory; `failing` makes every call reject as a store that is out. */
function memoryRepo(): { repo: OidcSessionsRepo; rows: OidcRevocation[]; failing: boolean; reads: number } {
  const state = {
    rows: [] as OidcRevocation[],
    failing: false,
    reads: 0,
    repo: undefined as unknown as OidcSessionsRepo,
  };
  const out = async () => {
    if (state.failing) throw new Error('store unavailable');
  };
  state.repo = {
    async revokeSession(row) {
      await out();
      if (!state.rows.some((r) => r.sessionId === row.sessionId)) state.rows.push(row);
    },
    async revokedSince(since, at) {
      await out();
      state.reads++;
      return state.rows.filter((r) => r.revokedAt >= since && r.expiresAt > at);
    },
    async deleteExpiredRevocations() {
      return 0;
    },
    signingKeys: async () => [],
    addSigningKey: async () => undefined,
    deleteSigningKey: async () => undefined,
    legacyKey: async () => undefined,
    forgetLegacyKey: async () => undefined,
  };
  return state;
}

// The node's list of signed-out sessions, with a store in memory and a hand-moved clock: each
// poll is called directly, so nothing waits for a timer.
describe('signed-out sessions', () => {
  const log = pino({ level: 'silent' });
  const T = 1_800_000_000_000;

  it('refuses a session signed out on this node at once, and one signed out elsewhere after the next poll', async () => {
    const store = memoryRepo();
    let now = T;
    const here = new Revocations({ repo: store.repo, log, now: () => now });
    const there = new Revocations({ repo: store.repo, log, now: () => now });
    await here.poll();
    await there.poll();
    now += 1000;
    await here.revoke('s1', T + 3_600_000);
    assert.equal(here.has('s1'), true);
    assert.equal(there.has('s1'), false);
    now += 500;
    await there.poll();
    assert.equal(there.has('s1'), true);
    assert.equal(there.has('s2'), false);
  });

  it('still sees a sign-out stored with a clock a little behind the newest it has read', async () => {
    const store = memoryRepo();
    let now = T;
    const node = new Revocations({ repo: store.repo, log, now: () => now });
    store.rows.push({ sessionId: 'late', revokedAt: T + 10_000, expiresAt: T + 3_600_000 });
    now = T + 10_000;
    await node.poll();
    await node.poll();
    // Written by a node whose clock is 20 s behind, committed after the last poll.
    store.rows.push({ sessionId: 'skewed', revokedAt: T - 10_000, expiresAt: T + 3_600_000 });
    now += 500;
    await node.poll();
    assert.equal(node.has('skewed'), true);
  });

  it('forgets sessions that would have expired anyway at the next full read', async () => {
    const store = memoryRepo();
    let now = T;
    const node = new Revocations({ repo: store.repo, log, now: () => now });
    await node.poll();
    await node.revoke('brief', T + 60_000);
    assert.equal(node.has('brief'), true);
    now = T + 11 * 60_000;
    await node.poll();
    assert.equal(node.has('brief'), false);
  });

  it('is current while reads succeed, and not once it could not read for longer than the bound', async () => {
    const store = memoryRepo();
    let now = T;
    const node = new Revocations({ repo: store.repo, log, now: () => now });
    assert.equal(node.current(now), false, 'never read: not current');
    await node.poll();
    assert.equal(node.current(now), true);
    store.failing = true;
    now += REVOCATIONS_STALE_MS;
    await assert.rejects(node.poll(), /store unavailable/);
    assert.equal(node.current(now), true, 'exactly at the bound: still current');
    now += 1;
    assert.equal(node.current(now), false);
    assert.equal(node.staleSeconds(now), 30);
    store.failing = false;
    await node.poll();
    assert.equal(node.current(now), true);
  });

  it('does not count a sign-out the store could not take', async () => {
    const store = memoryRepo();
    const node = new Revocations({ repo: store.repo, log, now: () => T });
    await node.poll();
    store.failing = true;
    await assert.rejects(node.revoke('s1', T + 60_000), /store unavailable/);
    assert.equal(node.has('s1'), false, 'the visitor keeps the cookie and is told to try again');
  });
});
