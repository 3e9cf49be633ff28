import type { RequestLog, TcpConnectionLog } from '@svcrouter/sdk';
import { formatFailure, type Failure } from './failure.js';

/** A live tunnel as the output shows it. */
export interface TunnelView {
  /** Name from the config file when the agent runs several tunnels; empty otherwise. */
  name: string;
  url: string;
  /** Local target URL. */
  local: string;
  /** A TCP tunnel's public port on the edge. */
  port?: number;
  /** Paths served by other local targets (`--route`), each with its local target URL; absent: none. */
  routes?: Array<{ path: string; local: string }>;
}

/**
 * The agent's terminal output. This is product output, not logging: one short line per
 * event, stable enough for people to read and scripts to grep. Three implementations: plain
 * lines (this file), JSON lines, and the live screen on a terminal.
 */
export interface Output {
  /** The tunnels are live; every implementation shows `Forwarding <url> -> <local>` for each. */
  started(tunnels: TunnelView[]): void;
  /** A tunnel started through the agent API is live. */
  added(tunnel: TunnelView): void;
  /** A tunnel stopped through the agent API is off the edge. */
  removed(tunnel: TunnelView): void;
  request(tunnel: TunnelView, log: RequestLog): void;
  /** A TCP tunnel's visitor connection closed. */
  connection(tunnel: TunnelView, log: TcpConnectionLog): void;
  /**
   * The connection to the edge was lost, or (`planned`) the edge announced a restart; reported
   * once per episode, whatever the number of attempts.
   */
  reconnecting(tunnel: TunnelView, reason: string, planned: boolean): void;
  reconnected(tunnel: TunnelView): void;
  /** Several edge URLs: the session through `lost` dropped while the other node serves on. */
  failover(lost: string, reason: string): void;
  /** Several edge URLs: the tunnels are held through two nodes again, the new one at `server`. */
  restored(server: string): void;
  /** The agent stops: after a failure, after a release by the server (its sentence), or cleanly. */
  closed(failure: Failure | undefined, released?: string): void;
  /** A failure before any tunnel was live. */
  failure(failure: Failure): void;
  /** The local inspector listens at `url`. */
  inspecting(url: string): void;
  /** Something to fix that does not stop the agent. */
  warning(failure: Failure): void;
  /** Facts for the live screen (account, plan, round trip); plain and JSON output ignore them. */
  status?(status: ScreenStatus): void;
  info(line: string): void;
  error(line: string): void;
  /** Writes whatever is still held (call before exiting). */
  flush(): void;
}

/** What the live screen shows beside the tunnels; each field arrives when known. */
export interface ScreenStatus {
  account?: string;
  plan?: string;
  rttMs?: number;
  /** Requests being served across the tunnels. */
  open?: number;
  /** The local inspector's address. */
  inspector?: string;
}

/**
 * Most one request-line write may be held back, ms. Far below what a person watching the
 * terminal can notice, and at 10k req/s it turns 10,000 write(2) calls a second into 50.
 */
const REQUEST_LINES_MAX_DELAY_MS = 20;

/** A stdout writer whose hot-path lines may be held briefly and joined into one write. */
export interface BatchedLines {
  /** Queues a line (ending in \n) for the next joined write. */
  hold(text: string): void;
  /** Writes held lines, then `text` and a newline, at once. */
  line(text: string): void;
  flush(): void;
}

/**
 * Request lines are the hot path: stdout on a pipe, file or terminal is a synchronous write(2)
 * per call, which under load cost more than proxying the request (7 µs of the agent's ~50 µs
 * per request, measured with --cpu-prof; joining only the lines of one event-loop turn saved
 * little, as a busy loop turn rarely holds more than one or two). So request lines are joined
 * and written at most every REQUEST_LINES_MAX_DELAY_MS: a line after a quiet spell goes out in
 * the check phase of its own turn (setImmediate), lines under load ride the next timed write.
 * Every other stdout line first writes the held ones, so stdout keeps its order.
 */
export function batchedLines(stdout: NodeJS.WritableStream): BatchedLines {
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
  return {
    hold(text) {
      held += text;
      if (soon !== undefined || later !== undefined) return;
      const wait = lastWriteMs + REQUEST_LINES_MAX_DELAY_MS - performance.now();
      if (wait <= 0) soon = setImmediate(flush);
      else later = setTimeout(flush, wait);
    },
    line(text) {
      flush();
      stdout.write(`${text}\n`);
    },
    flush,
  };
}

/** Plain lines on stdout (failures and warnings on stderr): off a terminal, or with `--log stdout`. */
export function terminalOutput(stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): Output {
  const out = batchedLines(stdout);
  return {
    started: (tunnels) => {
      for (const tunnel of tunnels) out.line(forwardingLine(tunnel));
    },
    added: (tunnel) => out.line(addedLine(tunnel)),
    removed: (tunnel) => out.line(removedLine(tunnel)),
    request: (tunnel, log) => out.hold(requestLine(tunnel, log)),
    connection: (tunnel, log) => {
      out.hold(connectionLine(tunnel, log));
      if (log.detail !== undefined && log.outcome === 'closed') stderr.write(`hint: ${log.detail}\n`);
    },
    // A restart the edge announced is news, not a failure: stdout, and no "lost".
    reconnecting: (_tunnel, reason, planned) =>
      planned
        ? out.line(`Edge restarting (${reason}); reconnecting…`)
        : stderr.write(`Connection to the edge lost (${reason}); reconnecting…\n`),
    reconnected: (tunnel) => out.line(`Reconnected: forwarding ${tunnel.url} -> ${tunnel.local}`),
    failover: (lost, reason) => out.line(failoverLine(lost, reason)),
    restored: (server) => out.line(restoredLine(server)),
    closed: (failure, released) => {
      out.flush();
      if (failure) stderr.write(`${formatFailure(failure)}\n`);
      else if (released) stderr.write(`${released}\n`);
    },
    failure: (failure) => stderr.write(`${formatFailure(failure)}\n`),
    warning: (failure) => stderr.write(`${formatFailure(failure)}\n`),
    inspecting: (url) => out.line(`Inspector ${url}`),
    info: (text) => out.line(text),
    error: (text) => stderr.write(`${text}\n`),
    flush: out.flush,
  };
}

/** One plain request line: time, [tunnel name], method, path, status, duration. */
export function requestLine(tunnel: TunnelView, log: RequestLog): string {
  const prefix = tunnel.name === '' ? '' : `[${tunnel.name}] `;
  return `${clock()} ${prefix}${printable(log.method)} ${printable(log.path)} ${log.status} ${Math.round(log.durationMs)}ms\n`;
}

/** C0 controls, DEL and C1 controls (U+0080–U+009F, which terminals such as xterm obey as controls). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * What a visitor sent (method, path), safe to write on a terminal: every control character
 * becomes its %XX escape. An HTTP/2 :path may carry bytes 0x80–0xff, which arrive as the C1
 * controls U+0080–U+009F (CSI, OSC…): written as they are, a visitor could move the cursor,
 * retitle the window or set the clipboard on the developer's terminal. Percent escapes keep
 * the line one line and show which byte came.
 */
export function printable(text: string): string {
  // The test first: a request line is the hot path and almost never holds a control.
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROLS, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** One closed TCP connection: time, [tunnel name], visitor, duration, bytes each way, how it ended. */
export function connectionLine(tunnel: TunnelView, log: TcpConnectionLog): string {
  const prefix = tunnel.name === '' ? '' : `[${tunnel.name}] `;
  const end = log.outcome === 'closed' ? 'closed' : log.detail === undefined ? log.outcome : `${log.outcome} (${log.detail})`;
  const kind = tunnel.url.startsWith('tls://') ? 'TLS' : 'TCP';
  return `${clock()} ${prefix}${kind} ${log.visitor || '-'} ${Math.round(log.durationMs)}ms in ${log.bytesIn}B out ${log.bytesOut}B ${end}\n`;
}

/** One of two edge nodes lost while the other serves: news, not an outage. */
export function failoverLine(lost: string, reason: string): string {
  return `Edge node ${lost} lost (${reason}); still forwarding through the other node`;
}

/** The lost node replaced. */
export function restoredLine(server: string): string {
  return `Forwarding through two edge nodes again (${server} replaces the lost one)`;
}

/** The line people and scripts look for, in every output mode; a tunnel with routes adds one line per route. */
export function forwardingLine(tunnel: TunnelView): string {
  const main = `Forwarding ${tunnel.url} -> ${tunnel.local}`;
  return tunnel.routes === undefined ? main : [main, ...routeLines(tunnel)].join('\n');
}

/** `Forwarding <url><path> -> <local>` for each route of a tunnel. */
export function routeLines(tunnel: TunnelView): string[] {
  return (tunnel.routes ?? []).map((route) => `Forwarding ${tunnel.url}${route.path} -> ${route.local}`);
}

/** A tunnel the agent API started: its name, then the Forwarding line. */
export function addedLine(tunnel: TunnelView): string {
  return `Tunnel ${tunnel.name} started: ${forwardingLine(tunnel)}`;
}

/** A tunnel the agent API stopped. */
export function removedLine(tunnel: TunnelView): string {
  return `Tunnel ${tunnel.name} stopped: ${tunnel.url} is offline`;
}

/** Cached clock: the HH:MM:SS prefix changes once a second, only the milliseconds every line. */
let clockSecond = -1;
let clockPrefix = '';

/** HH:MM:SS.mmm in local time: what a person watching the terminal compares with their clock. */
export function clock(nowMs = Date.now()): string {
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
