const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** Bytes in the units plans are written in: a plan's 50 GB is 50 × 1024³ bytes. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2;
  // Through Number, so a round amount reads "50 GB" rather than "50.0 GB".
  return `${Number(value.toFixed(digits))} ${UNITS[unit]}`;
}

/** A timestamp in the reader's locale, to the second. */
export function formatTime(iso: string | null): string {
  if (iso === null) return 'never';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** Time of day only, for the live Traffic table. */
export function formatClock(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString(undefined, { hour12: false });
}
