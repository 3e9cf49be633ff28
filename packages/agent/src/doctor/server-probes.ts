import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { localhostLookup } from './probes.js';

/** A JSON answer of the server's API, with when it was asked and answered. */
export interface ServerAnswer {
  status: number;
  json: unknown;
  /** The HTTP Date header, ms since the epoch; undefined when absent or unparseable. */
  dateMs: number | undefined;
  /** Local clock when the request was sent and when the answer's head arrived, ms since the epoch. */
  sentMs: number;
  answeredMs: number;
}

/** TLS error codes that mean "the certificate is not trusted here", not "nothing answers". */
const UNTRUSTED_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Whether `error` is a certificate that does not verify (as opposed to a network failure). */
export function isUntrusted(error: unknown): boolean {
  return UNTRUSTED_CODES.has((error as NodeJS.ErrnoException).code ?? '');
}

/** A short reason for a failed request: the error code and its sentence. */
export function describe(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/** GETs `path` of the server's apex (with the token when given); rejects on a network or TLS failure. */
export function getJson(
  server: string,
  path: string,
  token: string | undefined,
  ca: string | undefined,
  signal: AbortSignal,
): Promise<ServerAnswer> {
  const url = new URL(path, server);
  const transport = url.protocol === 'https:' ? https : http;
  const headers: http.OutgoingHttpHeaders = { accept: 'application/json', 'user-agent': 'svc-doctor' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    const sentMs = Date.now();
    const request = transport.get(
      url,
      { headers, agent: false, signal, lookup: localhostLookup, ca: ca === undefined ? undefined : [...tls.rootCertificates, ca] },
      (response) => {
        const answeredMs = Date.now();
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('error', reject);
        response.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          const date = Date.parse(response.headers.date ?? '');
          resolve({ status: response.statusCode ?? 0, json, dateMs: Number.isNaN(date) ? undefined : date, sentMs, answeredMs });
        });
      },
    );
    request.on('error', reject);
  });
}
