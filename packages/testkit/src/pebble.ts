import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { Agent, get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as acme from 'acme-client';
import { findTool } from './tools.js';
import { freePort, pollUntil, startProcess } from './processes.js';

// Pebble, Let's Encrypt's test CA, for tests. The Debian package ships no
// certificate for Pebble's own HTTPS listener, so each start makes one with
// openssl in a temp dir. Pebble's issuing root changes on every launch; read it
// from the management port (rootPem).

/** A running Pebble. */
export interface Pebble {
  /** The ACME directory URL, for SVC_ACME_DIRECTORY. */
  directoryUrl: string;
  /** The self-signed certificate of Pebble's listener: trust it to talk to Pebble. */
  listenerCaPem: string;
  /** Pebble's issuing root of this launch (`/roots/0` on the management port). */
  rootPem(): Promise<string>;
  close(): Promise<void>;
}

/** What Pebble needs from the test. */
export interface PebbleOptions {
  /** The DNS server Pebble resolves identifiers through (challtestsrv), `127.0.0.1:<port>`. */
  dnsServer: string;
  /** Port Pebble connects to for HTTP-01 validation (the test's challenge server). */
  httpPort: number;
}

/** Writes a key and self-signed certificate for 127.0.0.1/localhost into `dir`, with openssl. */
export async function createListenerCert(dir: string): Promise<{ certPath: string; keyPath: string; certPem: string }> {
  const openssl = findTool('openssl');
  if (openssl === undefined) throw new Error('openssl not found (apt-get install -y openssl)');
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  await promisify(execFile)(openssl, [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
    ...['-keyout', keyPath, '-out', certPath, '-days', '2', '-subj', '/CN=localhost'],
    ...['-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
  ]);
  return { certPath, keyPath, certPem: await readFile(certPath, 'utf8') };
}

/** GET over HTTPS trusting only `ca`; resolves with status and body. */
export function httpsGet(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { ca }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/**
 * Starts Pebble on free loopback ports with real HTTP-01 validation (no
 * PEBBLE_VA_ALWAYS_VALID): no validation sleep, no nonce rejections and no
 * authorization reuse, so every order validates and runs the same way.
 */
export async function startPebble(options: PebbleOptions): Promise<Pebble> {
  const binary = findTool('pebble');
  if (binary === undefined) throw new Error('pebble not found (apt-get install -y pebble)');
  const dir = await mkdtemp(join(tmpdir(), 'svc-pebble-'));
  try {
    const cert = await createListenerCert(dir);
    const [port, mgmtPort, tlsPort] = [await freePort(), await freePort(), await freePort()];
    const configPath = join(dir, 'pebble-config.json');
    const config = {
      pebble: {
        listenAddress: `127.0.0.1:${port}`,
        managementListenAddress: `127.0.0.1:${mgmtPort}`,
        certificate: cert.certPath,
        privateKey: cert.keyPath,
        httpPort: options.httpPort,
        // Nothing listens here: the issuer answers only HTTP-01.
        tlsPort,
        ocspResponderURL: '',
        externalAccountBindingRequired: false,
      },
    };
    await writeFile(configPath, JSON.stringify(config));
    const env = { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' };
    const args = ['-config', configPath, '-dnsserver', options.dnsServer];
    const proc = await startProcess(binary, args, (out) => out.includes('ACME directory available'), env);
    const directoryUrl = `https://127.0.0.1:${port}/dir`;
    const answers = (url: string) =>
      httpsGet(url, cert.certPem).then(
        (r) => r.status === 200,
        () => false,
      );
    // The log line comes just before Pebble starts serving.
    await pollUntil('pebble directory', () => answers(directoryUrl));
    return {
      directoryUrl,
      listenerCaPem: cert.certPem,
      async rootPem() {
        const { status, body } = await httpsGet(`https://127.0.0.1:${mgmtPort}/roots/0`, cert.certPem);
        if (status !== 200) throw new Error(`pebble /roots/0: HTTP ${status}`);
        return body;
      },
      async close() {
        await proc.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Makes acme-client (process-wide: it has one axios instance) trust `caPem`;
 * returns a function that restores the previous agent.
 */
export function trustInAcmeClient(caPem: string): () => void {
  const previous = acme.axios.defaults.httpsAgent as unknown;
  const agent = new Agent({ ca: caPem });
  acme.axios.defaults.httpsAgent = agent;
  return () => {
    acme.axios.defaults.httpsAgent = previous;
    agent.destroy();
  };
}

const ACME_CHALLENGE_PATH = '/.well-known/acme-challenge/';

/** The token of an HTTP-01 challenge request's path, as a CA's validator asks for it. */
function acmeChallengeToken(path: string): string | undefined {
  if (!path.startsWith(ACME_CHALLENGE_PATH)) return undefined;
  const token = path.slice(ACME_CHALLENGE_PATH.length).split('?')[0] ?? '';
  return token === '' ? undefined : token;
}

/** An HTTP server on a free loopback port answering `/.well-known/acme-challenge/<token>` from `respond`. */
export async function startHttp01Server(
  respond: (token: string) => string | undefined | Promise<string | undefined>,
): Promise<{ port: number; close(): Promise<void> }> {
  // Stands in for the edge's plain-HTTP listener.
  const server: Server = createServer((req, res) => {
    const token = acmeChallengeToken(req.url ?? '');
    void Promise.resolve(token === undefined ? undefined : respond(token)).then((answer) => {
      res.writeHead(answer === undefined ? 404 : 200, { 'content-type': 'text/plain' });
      res.end(answer ?? 'not found');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
