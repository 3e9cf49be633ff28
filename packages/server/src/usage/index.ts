export { UsageMeter, type UsageMeterOptions } from './usage-meter.js';
export { utcDay, utcMonth, utcDayEnd } from './calendar.js';
