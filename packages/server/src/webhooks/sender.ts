import http from 'node:http';
import https from 'node:https';
import { SVC_VERSION } from '@svcrouter/protocol';
import { guardedLookup, isPrivateAddress, urlHost } from './address-guard.js';
import { isIP } from 'node:net';

/** A receiver has this long to answer with a 2xx. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** What one HTTP attempt came to: a status (any, 2xx means delivered) or why there was none. */
export interface SendResult {
  statusCode?: number;
  error?: string;
  durationMs: number;
}

export interface SendOptions {
  timeoutMs: number;
  /** SVC_WEBHOOK_ALLOW_PRIVATE: loopback and private receivers are allowed (development, tests). */
  allowPrivate: boolean;
}

/**
 * POSTs one signed delivery. Redirects are not followed (a 3xx is a failed attempt), the
 * connect goes only to public addresses unless allowed, and the response body is read and
 * dropped: only the status matters. Never rejects.
 */
export function send(url: string, headers: Record<string, string>, body: string, opts: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const done = (result: Omit<SendResult, 'durationMs'>): SendResult => ({ ...result, durationMs: performance.now() - started });
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(done({ error: 'invalid URL' }));
  }
  const host = urlHost(target);
  // An IP literal is connected to without a lookup, so it is checked here.
  if (!opts.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host)) {
    return Promise.resolve(done({ error: `refused: ${host} is a private address` }));
  }
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, 'durationMs'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(result));
    };
    const req = client.request(
      target,
      {
        method: 'POST',
        agent: false,
        ...(opts.allowPrivate ? {} : { lookup: guardedLookup }),
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': `svcRouter-Webhooks/${SVC_VERSION}`,
        },
      },
      (res) => {
        finish({ statusCode: res.statusCode ?? 0 });
        // The body is not needed; drain it so the socket closes cleanly, but never wait on it.
        res.resume();
        res.on('error', () => undefined);
        setTimeout(() => req.destroy(), opts.timeoutMs).unref();
        res.on('end', () => req.destroy());
      },
    );
    const timer = setTimeout(() => {
      finish({ error: `no answer within ${opts.timeoutMs >= 1000 ? `${Math.round(opts.timeoutMs / 1000)} s` : `${opts.timeoutMs} ms`}` });
      req.destroy();
    }, opts.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish({ error: describe(err) }));
    req.end(body);
  });
}

function describe(err: NodeJS.ErrnoException): string {
  if (err.code === 'WEBHOOK_PRIVATE_ADDRESS') return err.message;
  if (err.code === 'ECONNREFUSED') return 'connection refused';
  if (err.code === 'ENOTFOUND') return 'host not found';
  if (err.code === 'ECONNRESET') return 'connection reset';
  if (err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT') || err.code === 'DEPTH_ZERO_SELF_SIGNED_CERT')
    return `TLS: ${err.message}`;
  return err.code ? `${err.code}: ${err.message}` : err.message;
}
