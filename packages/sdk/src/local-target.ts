import { isIPv4 } from 'node:net';

/** The HTTP version the agent speaks to the local service. */
export type OriginProto = 'http1' | 'h2';

/** The local service a tunnel forwards to. */
export interface LocalTarget {
  /** Origin URL, e.g. `http://localhost:3000` (an `h2c://` target's is `http://`). */
  origin: string;
  /** `host:port`, as shown on the 502 page. */
  hostPort: string;
  protocol: 'http:' | 'https:';
  /**
   * `h2`: one pooled HTTP/2 connection (cleartext with prior knowledge for http, ALPN `h2` for
   * https), needed for gRPC; `http1` (default): keep-alive HTTP/1.1 connections.
   */
  proto: OriginProto;
}

/** Whether `value` names an origin protocol (`--proto`, the config file's `proto`, forward()'s `proto`). */
export function isOriginProto(value: unknown): value is OriginProto {
  return value === 'http1' || value === 'h2';
}

/**
 * Parses what a user types after `svc http`: `3000`, `host:3000`, `http://host:3000`,
 * `https://host:3000` or `h2c://host:3000` (HTTP/2 in cleartext, as `--proto h2`). `proto`
 * picks the HTTP version (an `h2c://` target is always h2). Returns an error sentence instead
 * of throwing, for the CLI to print.
 */
export function parseLocalTarget(input: string | number, proto: OriginProto = 'http1'): LocalTarget | string {
  const text = String(input).trim();
  let candidate = text;
  // A negative number is a port typed wrong (URL would read "-1" as a host name), never a host.
  if (/^-\d+$/.test(text)) return `invalid local port "${text}": expected 1-65535`;
  if (/^\d+$/.test(text)) candidate = `http://localhost:${text}`;
  else if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) candidate = `http://${text}`;
  else if (/^h2c:\/\//i.test(text)) {
    candidate = `http://${text.slice(6)}`;
    proto = 'h2';
  }
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return `invalid local address "${text}": expected a port, host:port or an http(s) URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `invalid local address "${text}": only http, https and h2c are supported`;
  }
  const hostFault = typedHostFault(candidate, url.hostname);
  if (hostFault) return `invalid local address "${text}": ${hostFault}`;
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const portNumber = Number(port);
  if (!Number.isInteger(portNumber) || portNumber < 1 || portNumber > 65535) {
    return `invalid local port "${port}": expected 1-65535`;
  }
  if (url.pathname !== '/' || url.search || url.hash || url.username) {
    return `invalid local address "${text}": give only scheme, host and port`;
  }
  return { origin: url.origin, hostPort: `${url.hostname}:${port}`, protocol: url.protocol, proto };
}

/**
 * Why the host as typed is not one, or undefined. The URL parser reads a number as an IPv4
 * address (`0x50` is 0.0.0.80, `80.0` is 80.0.0.0), where the user almost surely meant a port,
 * and lets through characters no host name has (`+80`).
 */
function typedHostFault(candidate: string, parsed: string): string | undefined {
  const authority = candidate.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(/[/?#]/, 1)[0]!;
  if (authority.startsWith('[')) return undefined; // an IPv6 literal, which URL checked
  const typed = authority.replace(/:[^:]*$/, '').toLowerCase();
  if (isIPv4(parsed) && typed !== parsed) {
    return `"${typed}" is not a port (a decimal number, 1-65535) and not a full IPv4 address`;
  }
  if (!/^[a-z0-9_.-]+$/.test(parsed)) return `"${typed}" is not a host name`;
  return undefined;
}
