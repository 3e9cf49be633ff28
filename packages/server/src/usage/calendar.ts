// UTC calendar helpers for metering: the quota month and rollup day are UTC calendar units.

const DAY_MS = 24 * 60 * 60 * 1000;

/** `YYYY-MM-DD` of a ms timestamp, in UTC. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `YYYY-MM` of a ms timestamp, in UTC. */
export function utcMonth(ms: number): string {
  return utcDay(ms).slice(0, 7);
}

/** The ms timestamp at which the UTC day holding `ms` ends (next midnight UTC). */
export function utcDayEnd(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS + DAY_MS;
}
