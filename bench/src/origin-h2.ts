import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serveOrigin } from './origin.js';

/**
 * Windows of the HTTP/2 origin: those the edge announces (edge/limits.ts), so that "direct" is
 * an HTTP/2 server tuned for bulk transfer like the edge, not one held back by 64 KiB defaults.
 */
const STREAM_WINDOW = 1024 * 1024;
const CONNECTION_WINDOW = 8 * 1024 * 1024;

/** A throw-away self-signed certificate for x.localhost (clients of the benchmark do not verify it). */
function selfSigned(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-h2-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=x.localhost',
        '-addext',
        'subjectAltName=DNS:x.localhost',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore', input: '' },
    );
    return { key: readFileSync(key), cert: readFileSync(cert) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The origin's routes over HTTP/2 with TLS on loopback: the "direct" side of the HTTP/2 rows. */
export async function startH2Origin(port = 0): Promise<{ port: number; close(): Promise<void> }> {
  const server = http2.createSecureServer({ ...selfSigned(), settings: { initialWindowSize: STREAM_WINDOW } });
  server.on('session', (session: http2.ServerHttp2Session) => session.setLocalWindowSize(CONNECTION_WINDOW));
  server.on('request', (req, res) => serveOrigin(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse));
  server.on('sessionError', () => undefined);
  await new Promise<void>((resolve) => server.listen({ port, host: '127.0.0.1', backlog: 2048 }, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
