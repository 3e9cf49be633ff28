import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { after, before, test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { loadOrCreateDevCa, type DevCa, type PemCertificate } from './dev-ca.js';
import { createSniResolver, type SniResolver, type SniResolverOptions } from './sni-resolver.js';

const CURL = '/usr/bin/curl';

let dataDir: string;
let devCa: DevCa;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'svc-sni-'));
  devCa = await loadOrCreateDevCa(dataDir);
});
after(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** devCa with every issueLeaf call recorded. */
function countingCa(ca: DevCa): { ca: DevCa; issued: string[] } {
  const issued: string[] = [];
  return {
    issued,
    ca: {
      certPem: ca.certPem,
      certPath: ca.certPath,
      issueLeaf: (hostname) => {
        issued.push(hostname);
        return ca.issueLeaf(hostname);
      },
    },
  };
}

/** An HTTPS server on a loopback port 0 that uses `resolver`, closed when the test ends. */
async function startServer(t: TestContext, resolver: SniResolver): Promise<number> {
  const { certPem, keyPem } = await resolver.defaultCertificate();
  const server = createServer({ cert: certPem, key: keyPem, SNICallback: resolver.SNICallback }, (_req, res) => {
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as AddressInfo).port;
}

interface Handshake {
  authorized: boolean;
  /** The peer certificate's SAN, e.g. `DNS:abc.localhost`. */
  subjectAltName: string | undefined;
  fingerprint256: string | undefined;
}

/**
 * Completes one TLS handshake trusting only `ca`; rejects when it fails. Without a
 * servername the client sends no SNI. The hostname check runs only when
 * `checkHost` is true (default: when a servername is given).
 */
function handshake(port: number, servername: string | undefined, ca: string, checkHost = servername !== undefined): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: '127.0.0.1',
      port,
      ca,
      ...(servername === undefined ? {} : { servername }),
      ...(checkHost ? {} : { checkServerIdentity: () => undefined }),
    });
    socket.once('secureConnect', () => {
      const peer = socket.getPeerCertificate();
      resolve({ authorized: socket.authorized, subjectAltName: peer.subjectaltname, fingerprint256: peer.fingerprint256 });
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

function resolverWith(overrides: Partial<SniResolverOptions> = {}): SniResolver {
  return createSniResolver({ sharedDomain: 'localhost', devCa, isServedHost: () => false, ...overrides });
}

test('a handshake for <name>.localhost verifies against the dev CA and names exactly that host', async (t) => {
  const port = await startServer(t, resolverWith());
  const result = await handshake(port, 'abc.localhost', devCa.certPem);
  assert.equal(result.authorized, true);
  assert.equal(result.subjectAltName, 'DNS:abc.localhost');
});

test('a server restarted on the same data dir is trusted by a client holding the first CA', async (t) => {
  const firstPem = devCa.certPem;
  const restarted = await loadOrCreateDevCa(dataDir);
  assert.equal(new X509Certificate(restarted.certPem).fingerprint256, new X509Certificate(firstPem).fingerprint256);
  const port = await startServer(t, resolverWith({ devCa: restarted }));
  assert.equal((await handshake(port, 'again.localhost', firstPem)).authorized, true);
});

test('50 concurrent handshakes for one new host mint its certificate once', async (t) => {
  const counted = countingCa(devCa);
  const port = await startServer(t, resolverWith({ devCa: counted.ca }));
  counted.issued.length = 0; // startServer minted the apex for the no-SNI default
  const results = await Promise.all(Array.from({ length: 50 }, () => handshake(port, 'burst.localhost', devCa.certPem)));
  assert.deepEqual(counted.issued, ['burst.localhost']);
  assert.equal(new Set(results.map((r) => r.fingerprint256)).size, 1);
  assert.ok(results.every((r) => r.authorized));
});

test('an unserved hostname fails the handshake and orders nothing', async (t) => {
  const counted = countingCa(devCa);
  const asked: string[] = [];
  let ordered = 0;
  const port = await startServer(
    t,
    resolverWith({
      devCa: counted.ca,
      isServedHost: (host) => {
        asked.push(host);
        return false;
      },
      onDemand: async () => {
        ordered += 1;
        return undefined;
      },
    }),
  );
  counted.issued.length = 0;
  // The server aborts the handshake, so the client sees the socket close before TLS is up.
  await assert.rejects(handshake(port, 'evil.example.com', devCa.certPem), { code: 'ECONNRESET' });
  assert.deepEqual(asked, ['evil.example.com']);
  assert.equal(ordered, 0);
  assert.deepEqual(counted.issued, []);
});

test('a served custom hostname gets its certificate from onDemand', async (t) => {
  const ordered: string[] = [];
  const port = await startServer(
    t,
    resolverWith({
      isServedHost: async (host) => host === 'app.example.com',
      onDemand: (host) => {
        ordered.push(host);
        return devCa.issueLeaf(host); // stands in for ACME
      },
    }),
  );
  const result = await handshake(port, 'app.example.com', devCa.certPem);
  assert.equal(result.subjectAltName, 'DNS:app.example.com');
  assert.deepEqual(ordered, ['app.example.com']);
});

test('without onDemand a custom hostname fails without asking isServedHost', async () => {
  let asked = 0;
  const resolver = resolverWith({
    isServedHost: () => {
      asked += 1;
      return true;
    },
  });
  assert.equal(await resolver.contextFor('app.example.com'), undefined);
  assert.equal(asked, 0);
});

test('invalid servernames fail the handshake without any lookup or mint', async (t) => {
  const counted = countingCa(devCa);
  let asked = 0;
  const resolver = resolverWith({
    devCa: counted.ca,
    isServedHost: () => {
      asked += 1;
      return true;
    },
    onDemand: (host) => devCa.issueLeaf(host),
  });
  const port = await startServer(t, resolver);
  counted.issued.length = 0;
  await assert.rejects(handshake(port, 'bad_name.localhost', devCa.certPem), { code: 'ECONNRESET' });
  const tooLong = `${'a'.repeat(60)}.`.repeat(5) + 'example.com';
  for (const name of [tooLong, 'a..localhost', '-x.localhost']) {
    const error = await new Promise<Error | null>((resolve) => resolver.SNICallback(name, (err) => resolve(err)));
    assert.ok(error instanceof Error, name);
  }
  assert.deepEqual(counted.issued, []);
  assert.equal(asked, 0);
});

test('a client that sends no SNI gets the shared-domain apex certificate', async (t) => {
  const port = await startServer(t, resolverWith());
  const result = await handshake(port, undefined, devCa.certPem);
  assert.equal(result.authorized, true);
  assert.equal(result.subjectAltName, 'DNS:localhost');
});

test('upper-case and trailing-dot servernames share the lower-case certificate', async () => {
  const counted = countingCa(devCa);
  const resolver = resolverWith({ devCa: counted.ca });
  const [a, b] = await Promise.all([resolver.contextFor('ABC.Localhost.'), resolver.contextFor('abc.localhost')]);
  assert.ok(a !== undefined && a === b);
  assert.deepEqual(counted.issued, ['abc.localhost']);
});

test('a name two labels under the shared domain is not minted from the dev CA', async () => {
  const counted = countingCa(devCa);
  const resolver = resolverWith({ devCa: counted.ca });
  assert.equal(await resolver.contextFor('a.b.localhost'), undefined);
  assert.deepEqual(counted.issued, []);
});

test('a static certificate serves every shared-domain name without minting', async (t) => {
  const counted = countingCa(devCa);
  const staticCert: PemCertificate = await devCa.issueLeaf('localhost'); // stands in for an operator wildcard
  const resolver = resolverWith({ devCa: counted.ca, staticCert });
  const port = await startServer(t, resolver);
  const expected = new X509Certificate(staticCert.certPem).fingerprint256;
  // The stand-in names only `localhost`, so the hostname check is off; the fingerprint
  // proves which certificate was served.
  for (const name of ['one.localhost', 'two.localhost']) {
    assert.equal((await handshake(port, name, devCa.certPem, false)).fingerprint256, expected);
  }
  assert.equal(await resolver.contextFor('one.localhost'), await resolver.contextFor('two.localhost'));
  assert.deepEqual(counted.issued, []);
});

test('curl trusts the certificate given the dev CA file', async (t) => {
  try {
    await access(CURL);
  } catch {
    t.skip(`curl not found at ${CURL}; install the Debian package curl`);
    return;
  }
  const port = await startServer(t, resolverWith());
  const { stdout } = await promisify(execFile)(CURL, [
    '--silent',
    '--show-error',
    '--noproxy',
    '*',
    '--cacert',
    devCa.certPath,
    '--resolve',
    `abc.localhost:${port}:127.0.0.1`,
    `https://abc.localhost:${port}/`,
  ]);
  assert.equal(stdout, 'ok');
});

test('the dev CA never mints for a TLS passthrough name; other shared-domain names still get theirs', async () => {
  const { ca, issued } = countingCa(devCa);
  const asked: string[] = [];
  const resolver = createSniResolver({
    sharedDomain: 'localhost',
    devCa: ca,
    isServedHost: () => false,
    isPassthrough: async (host) => {
      asked.push(host);
      return host === 'db.localhost';
    },
  });
  assert.equal(await resolver.contextFor('db.localhost'), undefined);
  assert.notEqual(await resolver.contextFor('web.localhost'), undefined);
  assert.deepEqual(issued, ['web.localhost']);
  assert.deepEqual(asked.sort(), ['db.localhost', 'web.localhost']);
});
