/** The local service a tunnel forwards to. */
export interface LocalTarget {
  /** Origin URL, e.g. `http://localhost:3000`. */
  origin: string;
  /** `host:port`, as shown on the 502 page. */
  hostPort: string;
  protocol: 'http:' | 'https:';
}

/**
 * Parses what a user types after `svc http`: `3000`, `host:3000`, `http://host:3000` or
 * `https://host:3000`. Returns an error sentence instead of throwing, for the CLI to print.
 */
export function parseLocalTarget(input: string | number): LocalTarget | string {
  const text = String(input).trim();
  let candidate = text;
  if (/^\d+$/.test(text)) candidate = `http://localhost:${text}`;
  else if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) candidate = `http://${text}`;
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return `invalid local address "${text}": expected a port, host:port or an http(s) URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `invalid local address "${text}": only http and https are supported`;
  }
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const portNumber = Number(port);
  if (!Number.isInteger(portNumber) || portNumber < 1 || portNumber > 65535) {
    return `invalid local port "${port}": expected 1-65535`;
  }
  if (url.pathname !== '/' || url.search || url.hash || url.username) {
    return `invalid local address "${text}": give only scheme, host and port`;
  }
  return { origin: url.origin, hostPort: `${url.hostname}:${port}`, protocol: url.protocol };
}
