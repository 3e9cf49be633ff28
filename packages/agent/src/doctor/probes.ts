import dns from 'node:dns';
import type http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { pipeline } from 'node:stream/promises';
import tls from 'node:tls';
import WebSocket from 'ws';
import { hashingSink, randomStream, type Transfer } from './local-service.js';

/** Where the probes go: the tunnel's public URL, trusting the extra CA when given. */
export interface PublicTarget {
  url: URL;
  ca: string | undefined;
}

/**
 * Resolves `localhost` and every `*.localhost` name to loopback, as RFC 6761 says and browsers
 * do (the embedded server's tunnels live there, and the system resolver often does not know
 * them); anything else through the system resolver.
 */
export const localhostLookup: LookupFunction = (hostname, options, callback) => {
  const name = hostname.toLowerCase();
  if (name !== 'localhost' && !name.endsWith('.localhost')) return dns.lookup(hostname, options, callback);
  if ((options as { all?: boolean }).all)
    (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

/** Rejects with `what` timed out after `ms` unless `work` settles first. */
export async function within<T>(ms: number, what: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new Error(`${what} timed out after ${ms / 1000} s`));
    }, ms);
  });
  try {
    return await Promise.race([work(abort.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The certificate the edge presents for the public host, verified; rejects with the TLS error. */
export function verifyTls(target: PublicTarget, signal: AbortSignal): Promise<tls.PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host: target.url.hostname,
      port: Number(target.url.port || 443),
      servername: target.url.hostname,
      ca: target.ca === undefined ? undefined : [...tls.rootCertificates, target.ca],
      lookup: localhostLookup,
      ALPNProtocols: ['http/1.1'],
    });
    signal.addEventListener('abort', () => socket.destroy());
    socket.once('secureConnect', () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.once('error', reject);
  });
}

/** An HTTP/1.1 request to the public URL; resolves with the status and the whole (small) body. */
export function get1(target: PublicTarget, path: string, signal: AbortSignal): Promise<{ status: number; body: string; version: string }> {
  return new Promise((resolve, reject) => {
    const request = https.get(new URL(path, target.url), options1(target, signal), (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, version: response.httpVersion }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

/** An HTTP/2 GET of the public URL (ALPN h2); resolves with the status and body. */
export function get2(target: PublicTarget, path: string, signal: AbortSignal): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(target.url.origin, {
      ca: target.ca === undefined ? undefined : [...tls.rootCertificates, target.ca],
      servername: target.url.hostname,
      lookup: localhostLookup,
    } as http2.SecureClientSessionOptions);
    signal.addEventListener('abort', () => session.destroy());
    session.on('error', reject);
    const stream = session.request({ ':path': path, ':method': 'GET' });
    let status = 0;
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('end', () => {
      session.close();
      resolve({ status, body });
    });
    stream.on('error', reject);
  });
}

/** Sends `text` over a WebSocket to the public URL and resolves with what comes back. */
export function webSocketEcho(target: PublicTarget, path: string, text: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, target.url);
    url.protocol = 'wss:';
    // ws hands these to https.request, which knows `lookup`; its types do not list it.
    const options = {
      ca: target.ca === undefined ? undefined : [...tls.rootCertificates, target.ca],
      lookup: localhostLookup,
      servername: target.url.hostname,
    };
    const socket = new WebSocket(url, options as WebSocket.ClientOptions);
    signal.addEventListener('abort', () => socket.terminate());
    socket.on('unexpected-response', (_request, response) => {
      reject(new Error(`the upgrade was answered ${response.statusCode ?? 0} instead of 101`));
      socket.terminate();
    });
    socket.on('error', reject);
    socket.on('open', () => socket.send(text));
    socket.on('message', (data) => {
      resolve(String(data));
      socket.close();
    });
  });
}

/** Opens the server-sent event stream and resolves with the first event's data and its delay, ms. */
export function firstEvent(target: PublicTarget, path: string, signal: AbortSignal): Promise<{ data: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = https.get(new URL(path, target.url), options1(target, signal), (response) => {
      if (response.statusCode !== 200) return reject(new Error(`the event stream was answered ${response.statusCode ?? 0}`));
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        const match = /^data: (.*)\n\n/m.exec(text);
        if (!match) return;
        resolve({ data: match[1]!, ms: performance.now() - started });
        request.destroy();
      });
      response.on('error', () => undefined);
    });
    request.on('error', reject);
  });
}

/** Streams `bytes` random bytes up to the public URL; resolves with what was sent and what the service answered. */
export async function upload(
  target: PublicTarget,
  path: string,
  bytes: number,
  signal: AbortSignal,
): Promise<{ sent: Transfer; received: Transfer }> {
  const { stream, done } = randomStream(bytes);
  const answer = new Promise<string>((resolve, reject) => {
    const request = https.request(
      new URL(path, target.url),
      { ...options1(target, signal), method: 'POST', headers: { 'content-type': 'application/octet-stream', 'content-length': bytes } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          response.statusCode === 200 ? resolve(body) : reject(new Error(`the upload was answered ${response.statusCode ?? 0}`)),
        );
      },
    );
    request.on('error', reject);
    pipeline(stream, request).catch(reject);
  });
  const received = JSON.parse(await answer) as Transfer;
  return { sent: await done, received };
}

/** Streams `bytes` down from the public URL, hashing as they arrive; resolves with what came. */
export function download(target: PublicTarget, path: string, signal: AbortSignal): Promise<Transfer> {
  return new Promise((resolve, reject) => {
    const request = https.get(new URL(path, target.url), options1(target, signal), (response) => {
      if (response.statusCode !== 200) return reject(new Error(`the download was answered ${response.statusCode ?? 0}`));
      const { sink, done } = hashingSink();
      pipeline(response, sink).then(() => done.then(resolve), reject);
    });
    request.on('error', reject);
  });
}

/** Options of one HTTP/1.1 request to the public URL: its own connection, the extra CA, loopback names. */
function options1(target: PublicTarget, signal: AbortSignal): https.RequestOptions {
  return {
    agent: false,
    ca: target.ca === undefined ? undefined : [...tls.rootCertificates, target.ca],
    lookup: localhostLookup,
    signal,
    headers: { 'user-agent': 'svc-doctor' },
  } satisfies http.RequestOptions & https.RequestOptions;
}
