/**
 * Runs `task` `count` times with at most `lanes` runs at once: each lane starts the next run as
 * its last one ends, so a load test holds a steady number in flight.
 */
export async function inLanes(count: number, lanes: number, task: () => Promise<void>): Promise<void> {
  let started = 0;
  const lane = async (): Promise<void> => {
    while (started < count) {
      started++;
      await task();
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, count) }, lane));
}
