import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { TestServer } from './server.js';

/** Resolves every name to loopback: `*.localhost` names need no DNS in tests. */
export const loopbackLookup: LookupFunction = (_hostname, options, callback) => {
  if ((options as { all?: boolean }).all)
    (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

export interface VisitOptions {
  method?: string;
  headers?: http.OutgoingHttpHeaders;
  body?: string | Buffer;
  /** Over HTTPS (SNI = hostname, trusting the server's dev CA). Default false. */
  secure?: boolean;
}

export interface VisitResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  httpVersion: string;
  body: Buffer;
  text: string;
}

/** The URL of `hostname` on the test server's HTTP or HTTPS port. */
export function edgeUrl(server: Pick<TestServer, 'httpPort' | 'httpsPort'>, hostname: string, path = '/', secure = false): string {
  return `${secure ? 'https' : 'http'}://${hostname}:${secure ? server.httpsPort : server.httpPort}${path}`;
}

/** Requests `path` on `hostname` through the edge, as a visitor would, and reads the whole answer. */
export function visit(
  server: Pick<TestServer, 'httpPort' | 'httpsPort' | 'caPem'>,
  hostname: string,
  path = '/',
  options: VisitOptions = {},
): Promise<VisitResult> {
  const secure = options.secure ?? false;
  const url = edgeUrl(server, hostname, path, secure);
  const transport = secure ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, {
      method: options.method ?? 'GET',
      headers: options.headers,
      lookup: loopbackLookup,
      ca: secure ? server.caPem : undefined,
      agent: false,
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          httpVersion: res.httpVersion,
          body,
          text: body.toString('utf8'),
        });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Calls the REST API at the apex with a bearer token (or raw Authorization header). */
export async function api(
  server: Pick<TestServer, 'url'>,
  method: string,
  path: string,
  auth: { token?: string; authorization?: string } = {},
  body?: unknown,
): Promise<{ status: number; headers: Headers; body: unknown; text: string }> {
  const headers: Record<string, string> = {};
  if (auth.token !== undefined) headers.authorization = `Bearer ${auth.token}`;
  if (auth.authorization !== undefined) headers.authorization = auth.authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}
