// Shared by the domains-*.test.ts files: a real svc-server wired to real DNS
// (pebble-challtestsrv) and a real ACME CA (Pebble) on loopback, and helpers to add,
// verify and handshake custom hosts.
import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import { startChallTestSrv, type ChallTestSrv } from '@svcrouter/testkit/dns';
import { startPebble, type Pebble } from '@svcrouter/testkit/pebble';
import { freePort } from '@svcrouter/testkit';
import { api, startServer, tempDir, type TestServer } from './index.js';

/** Every package the ACME suites need, for requireTools. */
export const ACME_TOOLS = ['pebble', 'pebble-challtestsrv', 'openssl'];
/** The Debian packages that provide them. */
export const ACME_PACKAGES = 'pebble openssl';

/** A domain as the API shows it (the fields these tests read). */
export interface DomainView {
  id: string;
  host: string;
  state: 'pending' | 'verified';
  txtRecord: { type: 'TXT'; name: string; value: string };
  target: { cname: string | null; a: string[] } | null;
  certificate: { state: 'none' | 'pending' | 'issued' | 'failed'; error: string | null; expiresAt: string | null };
}

/** DNS, CA and server, started together; the server's HTTP port is Pebble's HTTP-01 port. */
export interface DomainWorld {
  dns: ChallTestSrv;
  pebble?: Pebble;
  server: TestServer;
  /** Pebble's issuing root of this launch (empty without Pebble). */
  root: string;
  /** Stops the server (keeping its data) and starts it again on the same ports. */
  restart(): Promise<TestServer>;
  close(): Promise<void>;
}

/** A fresh test host under example.test. */
export const freshHost = (label = 'app'): string => `${label}.d${randomBytes(4).toString('hex')}.example.test`;

/**
 * Starts challtestsrv, then (with `acme`) Pebble validating against a chosen free port,
 * then svc-server on that HTTP port with SVC_DNS_SERVERS, SVC_ACME_DIRECTORY,
 * SVC_EDGE_TARGET=127.0.0.1 and NODE_EXTRA_CA_CERTS trusting Pebble's listener.
 */
export async function startDomainWorld(options: { acme: boolean; env?: Record<string, string> }): Promise<DomainWorld> {
  const dns = await startChallTestSrv();
  const temp = await tempDir('svc-domains-');
  let pebble: Pebble | undefined;
  let server: TestServer | undefined;
  try {
    const httpPort = await freePort();
    const env: Record<string, string> = { SVC_DNS_SERVERS: dns.dnsServer, SVC_EDGE_TARGET: '127.0.0.1', ...options.env };
    let root = '';
    if (options.acme) {
      pebble = await startPebble({ dnsServer: dns.dnsServer, httpPort });
      const caFile = path.join(temp.dir, 'pebble-listener.pem');
      await writeFile(caFile, pebble.listenerCaPem);
      Object.assign(env, { SVC_ACME_DIRECTORY: pebble.directoryUrl, SVC_ACME_EMAIL: 'ops@svc.test', NODE_EXTRA_CA_CERTS: caFile });
      root = await pebble.rootPem();
    }
    const first = await startServer({ httpPort, env });
    server = first;
    const world: DomainWorld = {
      dns,
      pebble,
      server: first,
      root,
      async restart() {
        await world.server.close({ keepData: true });
        world.server = await startServer({ httpPort, dataDir: first.dataDir, env });
        return world.server;
      },
      async close() {
        await world.server.close({ keepData: true });
        await first.close();
        await pebble?.close();
        await dns.close();
        await temp.remove();
      },
    };
    return world;
  } catch (err) {
    await server?.close();
    await pebble?.close();
    await dns.close();
    await temp.remove();
    throw err;
  }
}

/** POST /v1/domains; asserts 201. */
export async function addDomain(server: TestServer, token: string, host: string): Promise<DomainView> {
  const res = await api(server, 'POST', '/v1/domains', { token }, { host });
  assert.equal(res.status, 201, res.text);
  return res.body as DomainView;
}

/** POST /v1/domains/:id/verify; returns status and body. */
export async function verifyDomain(server: TestServer, token: string, id: string) {
  const res = await api(server, 'POST', `/v1/domains/${id}/verify`, { token });
  return {
    status: res.status,
    body: res.body as DomainView & { verification: { ok: boolean; code: string | null; message: string } },
    text: res.text,
  };
}

/** Adds `host`, publishes its TXT record and an A record to 127.0.0.1, and verifies it. */
export async function addVerified(world: Pick<DomainWorld, 'dns' | 'server'>, token: string, host = freshHost()): Promise<DomainView> {
  const domain = await addDomain(world.server, token, host);
  await world.dns.addTxt(domain.txtRecord.name, domain.txtRecord.value);
  await world.dns.addA(host, ['127.0.0.1']);
  const result = await verifyDomain(world.server, token, domain.id);
  assert.equal(result.body.state, 'verified', result.text);
  return result.body;
}

/** svc_acme_orders_total from the server's GET /metrics: the ACME orders this process started. */
export async function acmeOrders(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const match = /^svc_acme_orders_total (\d+)$/m.exec(text);
  assert.ok(match, `svc_acme_orders_total missing from /metrics:\n${text}`);
  return Number(match[1]);
}

/** Resolves with the server's JSON log line whose msg is `msg` and whose host is `host` (past or future). */
export function logLine(server: TestServer, msg: string, host: string): Promise<RegExpMatchArray> {
  const quoted = (s: string) => JSON.stringify(s).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return server.proc.waitForLine(new RegExp(`^(?=.*"msg":${quoted(msg)})(?=.*"host":${quoted(host)})`));
}

/** Outcome of one TLS handshake with SNI `servername`, trusting only `ca`. */
export type Handshake = { ok: true; authorized: boolean; leaf: X509Certificate; issuerPem: string } | { ok: false; error: string };

// One client context per CA: building one per connection would dominate a 10,000-handshake run.
const contexts = new Map<string, tls.SecureContext>();

/** Handshakes with the edge's TLS port and closes at once. */
export function handshake(server: Pick<TestServer, 'httpsPort'>, servername: string, ca: string): Promise<Handshake> {
  let secureContext = contexts.get(ca);
  if (secureContext === undefined) contexts.set(ca, (secureContext = tls.createSecureContext({ ca })));
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port: server.httpsPort,
      servername,
      secureContext,
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    socket.once('secureConnect', () => {
      const peer = socket.getPeerCertificate(true);
      const leaf = socket.getPeerX509Certificate();
      const issuer = peer.issuerCertificate?.raw;
      resolve(
        leaf === undefined
          ? { ok: false, error: 'no peer certificate' }
          : { ok: true, authorized: socket.authorized, leaf, issuerPem: issuer ? new X509Certificate(issuer).toString() : '' },
      );
      socket.destroy();
    });
    socket.once('error', (error) => resolve({ ok: false, error: error.message }));
  });
}

/** Runs `task` over `items` with at most `limit` in flight. */
export async function inParallel<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
