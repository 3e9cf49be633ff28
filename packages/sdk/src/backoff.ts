/** First reconnect delay. */
export const RECONNECT_BASE_MS = 250;
/** Reconnect delays never exceed this. */
export const RECONNECT_CAP_MS = 15_000;
/** Reconnect delays after the edge announced a restart: it is expected back within seconds. */
export const PLANNED_RECONNECT_CAP_MS = 1000;

/**
 * Capped exponential backoff with "equal jitter": half the step is fixed so retries are never
 * instant, half random so a fleet of agents does not reconnect in lock-step after an edge restart.
 */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  const step = Math.min(RECONNECT_CAP_MS, RECONNECT_BASE_MS * 2 ** Math.min(attempt, 16));
  return Math.round(step / 2 + (random() * step) / 2);
}
