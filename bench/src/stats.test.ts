import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { geometricMean } from './stats.js';

const close = (actual: number, expected: number, what: string): void =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual}, expected ${expected}`);

describe('geometricMean', () => {
  it('is the exponential of the mean logarithm, with a 95% interval from the logs standard error', () => {
    const { mean, low, high } = geometricMean([2, 8]);
    close(mean, 4, 'mean');
    // Logs ln 2 and ln 8: mean ln 4, standard deviation ln 4 / √2, standard error ln 4 / 2.
    const half = 1.96 * (Math.log(4) / 2);
    close(low, 4 * Math.exp(-half), 'low');
    close(high, 4 * Math.exp(half), 'high');
  });

  it('gives a ratio and its reciprocal equal weight, unlike the arithmetic mean', () => {
    close(geometricMean([0.8, 1.25]).mean, 1, 'mean');
  });

  it('has a zero-width interval for equal ratios, and no interval for one ratio', () => {
    const equal = geometricMean([0.97, 0.97, 0.97]);
    for (const [what, value] of Object.entries(equal)) close(value, 0.97, what);
    const one = geometricMean([0.9]);
    close(one.mean, 0.9, 'mean');
    assert.ok(Number.isNaN(one.low) && Number.isNaN(one.high));
  });
});
