import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { geometricMean, medianInterval } from './stats.js';

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

describe('medianInterval', () => {
  it('is the 3rd smallest and the 3rd largest of 12 values, whatever their order', () => {
    const values = [5, -1, 9, 3, 12, 0, 7, 2, 30, 4, 6, -8];
    assert.deepEqual(medianInterval(values), { low: 0, high: 9 });
  });

  it('narrows towards the middle as values are added: the 6th and 15th of 20', () => {
    const values = Array.from({ length: 20 }, (_, i) => 20 - i);
    assert.deepEqual(medianInterval(values), { low: 6, high: 15 });
  });

  it('has no interval below six values (even the extremes cover less than 95% of five)', () => {
    const none = medianInterval([1, 2, 3, 4, 5]);
    assert.ok(Number.isNaN(none.low) && Number.isNaN(none.high));
    assert.deepEqual(medianInterval([1, 2, 3, 4, 5, 6]), { low: 1, high: 6 });
  });
});
