// Transfer metering and plan quotas: bytes counted in memory on the data path, flushed on an
// interval into monthly totals and daily rollups.
// May use: hostname, store, auth, metrics.
export { UsageMeter, type UsageMeterOptions } from './usage-meter.js';
export { utcDay, utcMonth, utcDayEnd } from './calendar.js';
