import { formatFailure } from './failure.js';
import type { RequestLog } from '@svcrouter/sdk';
import { batchedLines, forwardingLine, type Output, type TunnelView } from './output.js';

/**
 * `--log-format json`: one JSON object per line on stdout for each event (started, added, removed, request,
 * reconnecting, reconnected, failover, restored, closed), so stdout stays parseable line by line. The
 * `Forwarding <url> -> <local>` line people look for goes to stderr, with failures and warnings.
 */
export function jsonOutput(stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): Output {
  const out = batchedLines(stdout);
  const event = (name: string, fields: Record<string, unknown>): string =>
    JSON.stringify({ event: name, time: new Date().toISOString(), ...fields });
  return {
    started: (tunnels) => {
      for (const tunnel of tunnels) {
        stderr.write(`${forwardingLine(tunnel)}\n`);
        out.line(event('started', { ...tunnel }));
      }
    },
    added: (tunnel) => {
      stderr.write(`${forwardingLine(tunnel)}\n`);
      out.line(event('added', { ...tunnel }));
    },
    removed: (tunnel) => out.line(event('removed', { ...tunnel })),
    request: (tunnel, log) => out.hold(requestEvent(tunnel, log)),
    connection: (tunnel, log) =>
      out.hold(
        `${event('connection', { tunnel: tunnel.url, visitor: log.visitor, durationMs: Math.round(log.durationMs * 10) / 10, bytesIn: log.bytesIn, bytesOut: log.bytesOut, outcome: log.outcome, ...(log.detail === undefined ? {} : { detail: log.detail }) })}\n`,
      ),
    reconnecting: (tunnel, reason, planned) => out.line(event('reconnecting', { tunnel: tunnel.url, reason, planned })),
    reconnected: (tunnel) => out.line(event('reconnected', { ...tunnel })),
    failover: (lost, reason) => out.line(event('failover', { lost, reason })),
    restored: (server) => out.line(event('restored', { server })),
    closed: (failure, released) => {
      if (failure) stderr.write(`${formatFailure(failure)}\n`);
      else if (released) stderr.write(`${released}\n`);
      const reason = failure ? { error: failure.sentence, hint: failure.hint } : released ? { released } : {};
      out.line(event('closed', reason));
    },
    failure: (failure) => {
      stderr.write(`${formatFailure(failure)}\n`);
      out.line(event('closed', { error: failure.sentence, hint: failure.hint }));
    },
    inspecting: (url) => out.line(event('inspector', { url })),
    warning: (failure) => stderr.write(`${formatFailure(failure)}\n`),
    info: (text) => out.line(text),
    error: (text) => stderr.write(`${text}\n`),
    flush: out.flush,
  };
}

/** The last tunnel URL quoted for a request event, and its JSON. */
let quotedUrl = '';
let quotedUrlJson = '""';
/** Cached clock of request events: the ISO prefix changes once a second. */
let isoSecond = -1;
let isoPrefix = '';

/**
 * One request event, as JSON.stringify of { event, time, tunnel, method, path, status,
 * durationMs } would write it, built by hand: it runs once per request, and the generic path
 * (an object spread, a Date, a full stringify) cost more than the rest of the output.
 */
export function requestEvent(tunnel: TunnelView, log: RequestLog, nowMs = Date.now()): string {
  if (tunnel.url !== quotedUrl) {
    quotedUrl = tunnel.url;
    quotedUrlJson = JSON.stringify(tunnel.url);
  }
  const second = Math.floor(nowMs / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  const ms = nowMs - second * 1000;
  const time = isoPrefix + (ms < 10 ? `00${ms}` : ms < 100 ? `0${ms}` : String(ms));
  const durationMs = Math.round(log.durationMs * 10) / 10;
  return `{"event":"request","time":"${time}Z","tunnel":${quotedUrlJson},"method":${jsonText(log.method)},"path":${jsonText(log.path)},"status":${log.status},"durationMs":${durationMs}}\n`;
}

/** DEL and the C1 controls, which JSON.stringify leaves as they are. */
const RAW_CONTROL = /[\u007f-\u009f]/;
const RAW_CONTROLS = /[\u007f-\u009f]/g;

/**
 * JSON.stringify of a visitor's text with DEL and C1 controls as \u escapes too: the same value
 * once parsed, but a JSON line followed on a terminal (`tail -f`, no --log-file) cannot carry a
 * CSI or OSC (an HTTP/2 :path's bytes 0x80–0x9f) that the terminal would obey.
 */
function jsonText(text: string): string {
  const json = JSON.stringify(text);
  return RAW_CONTROL.test(json) ? json.replace(RAW_CONTROLS, (c) => `\\u00${c.charCodeAt(0).toString(16)}`) : json;
}
