import http from 'node:http';
import https from 'node:https';
import type { RequestHead } from '@svcrouter/protocol';
import type { ExchangeTap } from './capture.js';
import type { LocalTarget } from './local-target.js';

/** A replay that gets no answer in this long is recorded as a 504. */
const REPLAY_TIMEOUT_MS = 30_000;
/** Framing headers: the replay frames its own body. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * Sends one request straight to the local service, as the tunnel would have, reporting its
 * bytes to `tap`. Never throws: a refused connection or a bad header ends as a 502 record.
 */
export function sendReplay(target: LocalTarget, head: RequestHead, body: Buffer, tap: ExchangeTap): void {
  const started = performance.now();
  const url = new URL(target.origin);
  const headers: string[] = [];
  for (let i = 0; i + 1 < head.h.length; i += 2) {
    if (!FRAMING.has(head.h[i]!.toLowerCase())) headers.push(head.h[i]!, head.h[i + 1]!);
  }
  if (body.length > 0 || !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(head.m)) headers.push('Content-Length', String(body.length));
  const finish = (status: number): void => tap.done({ method: head.m, path: head.p, status, durationMs: performance.now() - started });
  let request: http.ClientRequest;
  try {
    request = (url.protocol === 'https:' ? https : http).request({
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port || (url.protocol === 'https:' ? 443 : 80),
      method: head.m,
      path: head.p,
      headers,
      agent: false,
      rejectUnauthorized: false,
      timeout: REPLAY_TIMEOUT_MS,
    } as http.RequestOptions);
  } catch {
    // node:http refuses a header name or value it cannot send.
    return finish(502);
  }
  tap.requestBody(body);
  request.on('response', (response) => {
    tap.response(response.statusCode ?? 0, response.rawHeaders);
    response.on('data', (chunk: Buffer) => tap.responseBody(chunk));
    response.on('end', () => finish(response.statusCode ?? 0));
    response.on('error', () => finish(response.statusCode ?? 502));
  });
  request.on('timeout', () => {
    request.destroy();
    finish(504);
  });
  request.on('error', () => finish(502));
  request.end(body);
}
