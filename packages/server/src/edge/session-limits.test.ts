import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SessionLimits } from './session-limits.js';

describe('SessionLimits', () => {
  it('refuses an account past its own limit without counting it, and others still get in', () => {
    const limits = new SessionLimits({ perNode: 10, perAccount: 2 });
    assert.equal(limits.admit('a'), undefined);
    assert.equal(limits.admit('a'), undefined);
    assert.equal(limits.admit('a'), 'account');
    assert.equal(limits.admit('b'), undefined);
    assert.equal(limits.count, 3);
    assert.deepEqual(limits.refused, { node: 0, account: 1 });
    limits.release('a');
    assert.equal(limits.admit('a'), undefined, 'a released session makes room');
  });

  it('refuses everyone once the node is full, until a session ends', () => {
    const limits = new SessionLimits({ perNode: 2, perAccount: 5 });
    assert.equal(limits.admit('a'), undefined);
    assert.equal(limits.admit('b'), undefined);
    assert.equal(limits.admit('c'), 'node');
    assert.equal(limits.admit('a'), 'node');
    limits.release('b');
    assert.equal(limits.admit('c'), undefined);
    assert.deepEqual(limits.refused, { node: 2, account: 0 });
  });

  it('a release of an account with nothing counted changes nothing', () => {
    const limits = new SessionLimits({ perNode: 1, perAccount: 1 });
    limits.release('ghost');
    assert.equal(limits.count, 0);
    assert.equal(limits.admit('a'), undefined);
    assert.equal(limits.admit('b'), 'node');
  });
});
