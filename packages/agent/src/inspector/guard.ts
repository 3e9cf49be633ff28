import type { IncomingMessage } from 'node:http';

/** Headers on every inspector answer: nothing framed, sniffed, cached or loaded from elsewhere. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** Methods that change state and so need a matching Origin (or none). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether `host` (of --inspect-addr) is a loopback address the inspector may listen on. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Why `addr` cannot be the inspector's address (`--inspect-addr`), or undefined when it can. */
export function inspectAddrProblem(addr: string): string | undefined {
  const parsed = parseInspectAddr(addr);
  if (!parsed) return `invalid --inspect-addr "${addr}": expected host:port`;
  if (!isLoopbackHost(parsed.host)) return `--inspect-addr must be a loopback address (127.0.0.1, localhost or ::1), not ${parsed.host}`;
  return undefined;
}

/** Splits `host:port` (IPv6 in brackets); undefined when malformed. */
export function parseInspectAddr(addr: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(addr);
  const port = Number(match?.[3]);
  if (!match || port > 65535) return undefined;
  return { host: match[1] ?? match[2]!, port };
}

/**
 * Why a request to the inspector is refused, or undefined to serve it.
 * - Host must name the inspector itself (`127.0.0.1:<port>`, `localhost:<port>`, `[::1]:<port>`, or
 *   the loopback address it is bound on):
 *   a page on another site that points its own name at 127.0.0.1 (DNS rebinding) sends its own
 *   name as Host, and gets nothing.
 * - A state-changing call (replay, starting or stopping a tunnel) needs an Origin of the inspector,
 *   or none (curl, scripts): a page elsewhere cannot make the browser replay requests or open
 *   tunnels.
 */
export function refusal(request: IncomingMessage, port: number, boundHost = '127.0.0.1'): string | undefined {
  // The loopback address it listens on (127.0.0.2 with --inspect-addr, say) is the name its URL prints.
  const bound = `${boundHost.includes(':') ? `[${boundHost}]` : boundHost.toLowerCase()}:${port}`;
  const allowed = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  if (!allowed.includes(bound)) allowed.push(bound);
  const host = (request.headers.host ?? '').toLowerCase();
  if (!allowed.includes(host)) return 'Host is not this inspector (DNS rebinding is refused)';
  if (SAFE_METHODS.has(request.method ?? 'GET')) return undefined;
  const origin = request.headers.origin;
  if (origin === undefined) return undefined;
  if (!allowed.map((name) => `http://${name}`).includes(origin.toLowerCase())) return 'Origin is not this inspector';
  return undefined;
}
