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
}

/** Output to the process's stdout/stderr. */
export function terminalOutput(stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): Output {
  return {
    forwarding: (url, local) => stdout.write(`Forwarding ${url} -> ${local}\n`),
    request: (log) =>
      stdout.write(`${clock()} ${log.method} ${log.path} ${log.status} ${Math.round(log.durationMs)}ms\n`),
    reconnecting: (reason) => stderr.write(`Connection to the edge lost (${reason}); reconnecting…\n`),
    reconnected: (url, local) => stdout.write(`Reconnected: forwarding ${url} -> ${local}\n`),
    info: (line) => stdout.write(`${line}\n`),
    error: (line) => stderr.write(`${line}\n`),
  };
}

/** HH:MM:SS.mmm in local time: what a person watching the terminal compares with their clock. */
function clock(): string {
  const now = new Date();
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
  return `${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}.${pad(now.getMilliseconds(), 3)}`;
}
