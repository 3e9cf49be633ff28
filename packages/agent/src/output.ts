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
 * Output to the process's stdout/stderr.
 *
 * Request lines are the hot path: stdout on a pipe or file is a synchronous write(2) per call,
 * which under load cost more than proxying the request. Lines of one event-loop turn are
 * therefore joined and written once, in the check phase of that same turn (setImmediate, never
 * a timer): still one line per request, in order, at most one loop turn late. Every other
 * stdout line first writes the held ones, so stdout keeps its order.
 */
export function terminalOutput(stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): Output {
  let held = '';
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (held === '') return;
    const text = held;
    held = '';
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
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
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
