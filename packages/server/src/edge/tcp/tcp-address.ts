/**
 * A TCP tunnel's name in the router and the tunnels table: `<shared domain>:<port>`. No HTTP
 * Host ever routes to it (the edge drops a Host's port before looking it up), and it is unique
 * per port, so the binder's machinery (limits, takeover, grace) serves TCP tunnels unchanged.
 */
export function tcpHostname(sharedDomain: string, port: number): string {
  return `${sharedDomain}:${port}`;
}

/** The port of a TCP tunnel's name, or undefined when `hostname` is not one of this shared domain. */
export function portOfTcpHostname(sharedDomain: string, hostname: string): number | undefined {
  const prefix = `${sharedDomain}:`;
  if (!hostname.startsWith(prefix)) return undefined;
  return parsePort(hostname.slice(prefix.length));
}

/**
 * An agent's `--remote-addr`, `host:port` or a bare port, to its parts (`host` undefined for a
 * bare port); undefined when it is neither.
 */
export function parseRemoteAddr(addr: string): { host: string | undefined; port: number } | undefined {
  const colon = addr.lastIndexOf(':');
  const port = parsePort(colon === -1 ? addr : addr.slice(colon + 1));
  if (port === undefined) return undefined;
  return { host: colon === -1 ? undefined : addr.slice(0, colon), port };
}

function parsePort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}
