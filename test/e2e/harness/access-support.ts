import http from 'node:http';
import http2 from 'node:http2';
import { loopbackLookup, type TestServer } from './index.js';

/** A visitor's answer, read whole. */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * GET `path` on a tunnel host over HTTP/1.1 from a chosen source address (the loopback range
 * lets a client bind 127.0.0.2…, and `::1`), as a visitor there would.
 */
export function visitFrom(
  server: Pick<TestServer, 'httpPort'>,
  hostname: string,
  path: string,
  options: { from?: string; headers?: http.OutgoingHttpHeaders; connectTo?: string } = {},
): Promise<Answer> {
  const connectTo = options.connectTo ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: connectTo,
      port: server.httpPort,
      path,
      headers: { host: `${hostname}:${server.httpPort}`, ...options.headers },
      localAddress: options.from,
      agent: false,
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** GET `path` on a tunnel host over HTTP/2 (TLS, the dev CA trusted). */
export async function visitH2(
  server: Pick<TestServer, 'httpsPort' | 'caPem'>,
  hostname: string,
  path: string,
  headers: http2.OutgoingHttpHeaders = {},
): Promise<Answer> {
  const session = http2.connect(`https://${hostname}:${server.httpsPort}`, {
    ca: server.caPem,
    servername: hostname,
    lookup: loopbackLookup,
  });
  try {
    return await new Promise<Answer>((resolve, reject) => {
      session.on('error', reject);
      const stream = session.request({ ':path': path, ...headers });
      let status = 0;
      let responseHeaders: http.IncomingHttpHeaders = {};
      let text = '';
      stream.setEncoding('utf8');
      stream.on('response', (h) => {
        status = Number(h[':status']);
        responseHeaders = h as http.IncomingHttpHeaders;
      });
      stream.on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => resolve({ status, headers: responseHeaders, text }));
      stream.on('error', reject);
      stream.end();
    });
  } finally {
    session.close();
  }
}

/** The `Authorization` value of HTTP Basic for a user and password (UTF-8). */
export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}
