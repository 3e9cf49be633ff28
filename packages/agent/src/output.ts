import type { RequestLog } from '@svcrouter/sdk';

/**
 * The agent's terminal output. This is product output, not logging: one short line per
 * event, stable enough for people to read and scripts to grep.
 */
export interface Output {
  forwarding(url: string, local: string): void;
  request(log: RequestLog): void;
  /** The connection to the edge was lost; printed once per episode, whatever the number of attempts. */
  reconnecting(reason: string): void;
  reconnected(url: string, local: string): void;
  info(line: string): void;
  error(line: string): void;
  /** Writes request lines still held for this event-loop turn (call before exiting). */
  flush(): void;
}

/**
 * Most one request-line write may be held back, ms. Far below what a person watching the
 * terminal can notice, and at 10k req/s it turns 10,000 write(2) calls a second into 50.
 */
const REQUEST_LINES_MAX_DELAY_MS = 20;

/**
 * Output to the process's stdout/stderr.
 *
 * Request lines are the hot path: stdout on a pipe, file or terminal is a synchronous write(2)
 * per call, which under load cost more than proxying the request (7 µs of the agent's ~50 µs
 * per request, measured with --cpu-prof; joining only the lines of one event-loop turn saved
 * little, as a busy loop turn rarely holds more than one or two). So request lines are joined
 * and written at most every REQUEST_LINES_MAX_DELAY_MS: a line after a quiet spell goes out in
 * the check phase of its own turn (setImmediate), lines under load ride the next timed write.
 * Every other stdout line first writes the held ones, so stdout keeps its order.
 */
export function terminalOutput(stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): Output {
  let held = '';
  let lastWriteMs = -Infinity;
  let soon: NodeJS.Immediate | undefined;
  let later: NodeJS.Timeout | undefined;
  const flush = (): void => {
    if (soon !== undefined) clearImmediate(soon);
    if (later !== undefined) clearTimeout(later);
    soon = later = undefined;
    if (held === '') return;
    const text = held;
    held = '';
    lastWriteMs = performance.now();
    stdout.write(text);
  };
  const line = (text: string): void => {
    flush();
    stdout.write(`${text}\n`);
  };
  return {
    forwarding: (url, local) => line(`Forwarding ${url} -> ${local}`),
    request: (log) => {
      held += `${clock()} ${log.method} ${log.path} ${log.status} ${Math.round(log.durationMs)}ms\n`;
      if (soon !== undefined || later !== undefined) return;
      const wait = lastWriteMs + REQUEST_LINES_MAX_DELAY_MS - performance.now();
      if (wait <= 0) soon = setImmediate(flush);
      else later = setTimeout(flush, wait);
    },
    reconnecting: (reason) => stderr.write(`Connection to the edge lost (${reason}); reconnecting…\n`),
    reconnected: (url, local) => line(`Reconnected: forwarding ${url} -> ${local}`),
    info: (text) => line(text),
    error: (text) => stderr.write(`${text}\n`),
    flush,
  };
}

/** Cached clock: the HH:MM:SS prefix changes once a second, only the milliseconds every line. */
let clockSecond = -1;
let clockPrefix = '';

/** HH:MM:SS.mmm in local time: what a person watching the terminal compares with their clock. */
function clock(): string {
  const nowMs = Date.now();
  const second = Math.floor(nowMs / 1000);
  if (second !== clockSecond) {
    clockSecond = second;
    const now = new Date(nowMs);
    clockPrefix = `${pad2(now.getHours())}:${pad2(now.getMinutes())}:${pad2(now.getSeconds())}.`;
  }
  const ms = nowMs - second * 1000;
  return clockPrefix + (ms < 10 ? `00${ms}` : ms < 100 ? `0${ms}` : String(ms));
}

function pad2(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}
