// How much a counter can grow within a window of time: the bound a crash may lose when the
// server flushes its meter every so often. Used by the metering crash test and benchmark.

/**
 * Most a cumulative count grew within any window of `windowMs`, from `timeline`: [ms, count]
 * pairs in time order. `base` is the count before the timeline's first entry.
 */
export function maxInWindow(timeline: ReadonlyArray<readonly [number, number]>, windowMs: number, base = 0): number {
  let best = 0;
  let start = 0;
  for (let i = 0; i < timeline.length; i++) {
    const [t, total] = timeline[i]!;
    while (timeline[start]![0] < t - windowMs) start++;
    const before = start === 0 ? base : timeline[start - 1]![1];
    best = Math.max(best, total - before);
  }
  return best;
}
