import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  KEY_ACTIVATION_DELAY_MS,
  RETAIN_AFTER_SUCCESSOR_MS,
  jwksMaxAgeSeconds,
  keyRefreshMs,
  planKeys,
  publishedKeys,
  signingKey,
} from './key-schedule.js';
import { IDENTITY_TTL_MS } from './identity-tokens.js';

// The schedule every node computes from the stored keys: published when stored, signing from
// activeAt, the replaced key published RETAIN_AFTER_SUCCESSOR_MS past its successor's activeAt.
describe('signing key schedule', () => {
  const T = 1_800_000_000_000;
  const first = { kid: 'first', createdAt: T, activeAt: T };
  const second = { kid: 'second', createdAt: T + 3_600_000, activeAt: T + 3_600_000 + KEY_ACTIVATION_DELAY_MS };
  const third = { kid: 'third', createdAt: T + 7_200_000, activeAt: T + 7_200_000 + KEY_ACTIVATION_DELAY_MS };

  it('keeps a replaced key longer than a token lives plus slack', () => {
    assert.ok(RETAIN_AFTER_SUCCESSOR_MS > IDENTITY_TTL_MS);
  });

  it('publishes a rotated key at once but signs with the old one until its activeAt', () => {
    const justStored = second.createdAt + 1;
    assert.equal(signingKey([first, second], justStored)?.kid, 'first');
    assert.deepEqual(
      publishedKeys([first, second], justStored).map((k) => k.kid),
      ['first', 'second'],
    );
    assert.deepEqual(
      planKeys([first, second], justStored).map((p) => p.state),
      ['signing', 'pending'],
    );
    assert.equal(signingKey([first, second], second.activeAt - 1)?.kid, 'first');
    assert.equal(signingKey([first, second], second.activeAt)?.kid, 'second');
  });

  it('keeps publishing the replaced key until its successor has been active for the retention, then retires it', () => {
    const dropAt = second.activeAt + RETAIN_AFTER_SUCCESSOR_MS;
    const during = planKeys([second, first], dropAt - 1);
    assert.deepEqual(
      during.map((p) => [p.key.kid, p.state, p.dropAt]),
      [
        ['first', 'retiring', dropAt],
        ['second', 'signing', undefined],
      ],
    );
    assert.deepEqual(
      publishedKeys([first, second], dropAt).map((k) => k.kid),
      ['second'],
    );
    assert.equal(planKeys([first, second], dropAt)[0]?.state, 'retired');
  });

  it('drops each key relative to its own successor when there are several rotations', () => {
    const at = third.activeAt + 1;
    assert.deepEqual(
      planKeys([first, second, third], at).map((p) => [p.key.kid, p.state]),
      [
        ['first', 'retired'],
        ['second', 'retiring'],
        ['third', 'signing'],
      ],
    );
  });

  it('picks the same key on every node when two were made active at once, whatever order they come in', () => {
    const a = { kid: 'aaa', createdAt: T, activeAt: T };
    const b = { kid: 'bbb', createdAt: T, activeAt: T };
    assert.equal(signingKey([a, b], T)?.kid, 'bbb');
    assert.equal(signingKey([b, a], T)?.kid, 'bbb');
    assert.deepEqual(
      publishedKeys([b, a], T + 1).map((k) => k.kid),
      ['aaa', 'bbb'],
      'the other stays published: a token it signed before the nodes agreed still verifies',
    );
  });

  it('signs with the first key when none is active yet, and with nothing when there is none', () => {
    assert.equal(signingKey([second], T)?.kid, 'second');
    assert.equal(signingKey([], T), undefined);
  });

  it('re-reads keys and lets JWKS caches expire well inside the activation delay', () => {
    for (const delay of [0, 1_000, 3_000, KEY_ACTIVATION_DELAY_MS, 3_600_000]) {
      const worst = keyRefreshMs(delay) + jwksMaxAgeSeconds(delay) * 1000;
      if (delay >= 2_000) assert.ok(worst < delay, `delay ${delay}: a key reaches every cache after ${worst} ms`);
    }
    assert.equal(jwksMaxAgeSeconds(KEY_ACTIVATION_DELAY_MS), 30);
    assert.equal(keyRefreshMs(KEY_ACTIVATION_DELAY_MS), 10_000);
  });
});
