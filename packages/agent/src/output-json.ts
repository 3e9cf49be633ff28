import { formatFailure } from './failure.js';
import { batchedLines, forwardingLine, type Output } from './output.js';

/**
 * `--log-format json`: one JSON object per line on stdout for each event (started, request,
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
    request: (tunnel, log) =>
      out.hold(
        `${event('request', { tunnel: tunnel.url, method: log.method, path: log.path, status: log.status, durationMs: Math.round(log.durationMs * 10) / 10 })}\n`,
      ),
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
