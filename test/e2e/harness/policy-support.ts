import http from 'node:http';
import type { TestServer } from './index.js';
import type { Answer } from './access-support.js';

/** Sends one HTTP/1.1 request with a body to a tunnel host (Node's server path at the edge), read whole. */
export function send(
  server: Pick<TestServer, 'httpPort'>,
  hostname: string,
  method: string,
  path: string,
  body: string | Buffer,
  headers: http.OutgoingHttpHeaders = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port: server.httpPort,
      method,
      path,
      headers: { host: `${hostname}:${server.httpPort}`, ...headers },
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
    req.end(body);
  });
}

/** What the origin's `/echo` answers. */
export interface Echo {
  method: string;
  url: string;
  headers: Record<string, string | undefined>;
  bodySha256: string;
  bodyLength: number;
}
