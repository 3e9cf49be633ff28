import http2 from 'node:http2';
import tls from 'node:tls';
import type { TestServer } from './index.js';

/** What an HTTP/2 visitor got: the status and body, or the stream's error code when it was reset. */
export interface H2Result {
  status: number;
  headers: http2.IncomingHttpHeaders;
  text: string;
  resetCode: number | undefined;
}

/** Opens an HTTP/2 session to the edge's TLS port for `hostname` (SNI), trusting the dev CA. */
export function h2Session(server: Pick<TestServer, 'httpsPort' | 'caPem'>, hostname: string): http2.ClientHttp2Session {
  const session = http2.connect(`https://${hostname}:${server.httpsPort}`, {
    // Node's client refuses to send a header block above 64,000 bytes; hostile tests need more.
    maxSendHeaderBlockLength: 1024 * 1024,
    // Dialled on loopback: `*.localhost` names need no DNS in tests.
    createConnection: () =>
      tls.connect({ host: '127.0.0.1', port: server.httpsPort, servername: hostname, ca: server.caPem, ALPNProtocols: ['h2'] }),
  });
  session.on('error', () => undefined);
  return session;
}

/** Sends one request on `session` and reads the whole answer (or the reset). */
export function h2Request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: string): Promise<H2Result> {
  return new Promise((resolve) => {
    const stream = session.request(headers, { endStream: body === undefined });
    const chunks: Buffer[] = [];
    let status = 0;
    let responseHeaders: http2.IncomingHttpHeaders = {};
    stream.on('response', (received) => {
      responseHeaders = received;
      status = Number(received[':status']);
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', () => undefined);
    stream.on('close', () =>
      resolve({ status, headers: responseHeaders, text: Buffer.concat(chunks).toString('utf8'), resetCode: stream.rstCode || undefined }),
    );
    if (body !== undefined) stream.end(body);
  });
}
