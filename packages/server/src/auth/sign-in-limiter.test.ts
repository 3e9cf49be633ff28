import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignInLimiter } from './sign-in-limiter.js';

const WINDOW = 15 * 60 * 1000;

describe('SignInLimiter', () => {
  const setup = () => {
    let clock = 1_000_000;
    const limiter = new SignInLimiter({ perAccount: 5, perIp: 20, windowMs: WINDOW }, () => clock);
    return { limiter, advance: (ms: number) => (clock += ms) };
  };

  it('blocks an account after 5 failures until the oldest leaves the window', () => {
    const { limiter, advance } = setup();
    for (let i = 0; i < 4; i++) {
      limiter.recordFailure('A@example.com', `10.0.0.${i}`);
      advance(1000);
    }
    assert.equal(limiter.retryAfterMs('a@example.com', '10.9.9.9'), 0);
    limiter.recordFailure('a@example.com', '10.0.0.9');
    // The oldest failure is 4 s old, so it leaves the window in WINDOW - 4 s.
    assert.equal(limiter.retryAfterMs('a@example.com', '10.9.9.9'), WINDOW - 4000);
    assert.equal(limiter.retryAfterMs('b@example.com', '10.9.9.9'), 0, 'other accounts are not blocked');
    advance(WINDOW - 4000);
    assert.equal(limiter.retryAfterMs('a@example.com', '10.9.9.9'), 0);
  });

  it('blocks an IP after 20 failures across accounts', () => {
    const { limiter } = setup();
    for (let i = 0; i < 20; i++) limiter.recordFailure(`u${i}@example.com`, '192.0.2.1');
    assert.equal(limiter.retryAfterMs('fresh@example.com', '192.0.2.1'), WINDOW);
    assert.equal(limiter.retryAfterMs('fresh@example.com', '192.0.2.2'), 0);
  });

  it('a success clears the account count, not the IP count', () => {
    const { limiter } = setup();
    for (let i = 0; i < 4; i++) limiter.recordFailure('c@example.com', '192.0.2.3');
    limiter.recordSuccess('c@example.com');
    limiter.recordFailure('c@example.com', '192.0.2.3');
    assert.equal(limiter.retryAfterMs('c@example.com', '192.0.2.4'), 0);
    for (let i = 0; i < 15; i++) limiter.recordFailure(`x${i}@example.com`, '192.0.2.3');
    assert.ok(limiter.retryAfterMs('c@example.com', '192.0.2.3') > 0, 'the IP kept its 5 earlier failures');
  });
});
