import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inLanes } from './lanes.js';

test('runs the task count times, never more than the lanes at once', async () => {
  let running = 0;
  let peak = 0;
  let runs = 0;
  await inLanes(25, 4, async () => {
    running++;
    peak = Math.max(peak, running);
    await new Promise<void>((resolve) => setImmediate(resolve));
    running--;
    runs++;
  });
  assert.equal(runs, 25);
  assert.equal(peak, 4);
  await inLanes(2, 8, async () => void runs++);
  assert.equal(runs, 27);
});
