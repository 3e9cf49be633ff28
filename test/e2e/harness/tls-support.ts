import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { tempDir } from './processes.js';

const execFileAsync = promisify(execFile);

/** Every client a TLS test runs gets at most this long, so a failure is a failure, never a hang. */
export const CLIENT_TIMEOUT_MS = 15_000;

/** A self-signed certificate for `host`, made by the openssl command line, with its files. */
export interface LocalCertificate {
  certPem: string;
  keyPem: string;
  certPath: string;
  keyPath: string;
  close(): Promise<void>;
}

/** A fresh self-signed certificate (EC P-256) whose CN and only SAN is `host`. */
export async function selfSignedCertificate(host: string): Promise<LocalCertificate> {
  const dir = await tempDir('svc-tls-cert-');
  const certPath = path.join(dir.dir, 'cert.pem');
  const keyPath = path.join(dir.dir, 'key.pem');
  await execFileAsync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${host}`,
      '-addext',
      `subjectAltName=DNS:${host}`,
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { timeout: CLIENT_TIMEOUT_MS },
  );
  return {
    certPem: await readFile(certPath, 'utf8'),
    keyPem: await readFile(keyPath, 'utf8'),
    certPath,
    keyPath,
    close: () => dir.remove(),
  };
}

/** A local service that terminates TLS with its own certificate: answers each connection with `answer(firstLine)`. */
export async function startTlsService(
  certificate: Pick<LocalCertificate, 'certPem' | 'keyPem'>,
  onSocket: (socket: tls.TLSSocket) => void,
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = tls.createServer({ cert: certificate.certPem, key: certificate.keyPem, ALPNProtocols: ['http/1.1'] }, (socket) => {
    socket.on('error', () => undefined);
    onSocket(socket);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => undefined);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A minimal HTTP/1.1 answer over any socket: reads the head, answers `body`, closes. */
export function answerHttp(socket: Socket, body: string): void {
  let head = '';
  socket.on('data', (chunk: Buffer) => {
    head += chunk.toString('latin1');
    if (!head.includes('\r\n\r\n')) return;
    socket.end(
      `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}

/** curl against `https://<host>:<port><path>` resolved to loopback, trusting only `caPath`; stdout, or the failure. */
export async function curlHttps(
  host: string,
  port: number,
  caPath: string,
  urlPath = '/',
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(
      'curl',
      [
        '-sS',
        '--max-time',
        String(CLIENT_TIMEOUT_MS / 1000 - 2),
        '--resolve',
        `${host}:${port}:127.0.0.1`,
        '--cacert',
        caPath,
        `https://${host}:${port}${urlPath}`,
      ],
      { timeout: CLIENT_TIMEOUT_MS },
    );
    return { ok: true, stdout, stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error) };
  }
}

/**
 * `openssl s_client -servername <host>` to loopback `port`, verifying against `caPath`, with
 * `input` on its stdin; the local service closes the connection after answering, which ends it.
 */
export function opensslClient(host: string, port: number, caPath: string, input: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'openssl',
      [
        's_client',
        '-connect',
        `127.0.0.1:${port}`,
        '-servername',
        host,
        '-verify_hostname',
        host,
        '-CAfile',
        caPath,
        '-verify_return_error',
        '-ign_eof',
      ],
      { timeout: CLIENT_TIMEOUT_MS },
      (error, stdout) => {
        if (error && (error as { killed?: boolean }).killed) return reject(new Error(`openssl s_client timed out:\n${stdout}`));
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout });
      },
    );
    child.stdin!.end(input);
  });
}

/** A TLS connection through the edge's HTTPS port to `servername`, trusting `ca`. */
export async function dialTls(port: number, servername: string, ca: string): Promise<tls.TLSSocket> {
  const socket = tls.connect({ host: '127.0.0.1', port, servername, ca, timeout: CLIENT_TIMEOUT_MS });
  socket.on('timeout', () => socket.destroy(new Error('TLS client timed out')));
  await once(socket, 'secureConnect');
  return socket;
}
