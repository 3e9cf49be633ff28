import { createPublicKey, X509Certificate as NodeX509Certificate, webcrypto } from 'node:crypto';
import { mkdir, mkdtemp, open, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isValidHostname, normalizeHostname } from '../hostname/index.js';
import { x509 } from './x509.js';

/** Subject of every generated dev CA; users see it in their trust store. */
export const DEV_CA_SUBJECT = 'CN=svcRouter Development CA';
/** The dev CA lives ten years so a trusted CA outlives any laptop setup. */
export const DEV_CA_VALIDITY_DAYS = 3650;
/** Leaf lifetime: well under Chromium's 397-day cap, and the same as ACME certificates. */
export const LEAF_VALIDITY_DAYS = 90;
/** notBefore is set this far in the past so a client whose clock runs slow still accepts a fresh certificate. */
export const CLOCK_SKEW_MS = 60 * 60 * 1000;

const DAY_MS = 24 * 60 * 60 * 1000;
// P-256 because key generation and signing take about a millisecond, which matters when
// minting inside a TLS handshake; every browser and TLS stack accepts it.
const EC_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const EC_SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;

/** A certificate chain and its private key, both PEM, ready for Node's `tls.createSecureContext({ cert, key })`. */
export interface PemCertificate {
  certPem: string;
  keyPem: string;
}

/** A local certificate authority that signs leaf certificates for the shared domain. */
export interface DevCa {
  /** The CA certificate, PEM; clients trust it via `ca`, NODE_EXTRA_CA_CERTS or `curl --cacert`. */
  readonly certPem: string;
  /** Absolute path of `ca.crt`, for messages that tell users which file to trust. */
  readonly certPath: string;
  /** Mints a fresh key and a leaf certificate whose only SAN is `hostname`; the chain is the leaf alone. */
  issueLeaf(hostname: string): Promise<PemCertificate>;
}

/** Loads the dev CA from `<dataDir>/dev-ca/`, creating it on first start; safe when several processes start at once. */
export async function loadOrCreateDevCa(dataDir: string): Promise<DevCa> {
  const dir = resolve(dataDir, 'dev-ca');
  const stored = (await readStoredCa(dir)) ?? (await createStoredCa(dataDir, dir));
  return openDevCa(stored, join(dir, 'ca.crt'));
}

/** Reads `ca.crt` and `ca.key`; undefined when neither exists yet. */
async function readStoredCa(dir: string): Promise<PemCertificate | undefined> {
  let [certPem, keyPem] = await readPair(dir);
  // Another process's first start renames its complete folder into place at any moment, and
  // that can land between our two reads: one file "missing", the other there. The rename
  // happens once, so a second read sees the whole folder; only a folder still missing a file
  // then is really incomplete.
  if ((certPem === undefined) !== (keyPem === undefined)) [certPem, keyPem] = await readPair(dir);
  if (certPem === undefined && keyPem === undefined) return undefined;
  if (certPem === undefined || keyPem === undefined) {
    // Never regenerate silently: users may have trusted the old CA in their browser.
    throw new Error(`dev CA in ${dir} is incomplete (need ca.crt and ca.key); delete the folder to generate a new CA`);
  }
  return { certPem, keyPem };
}

function readPair(dir: string): Promise<[string | undefined, string | undefined]> {
  return Promise.all([readIfExists(join(dir, 'ca.crt')), readIfExists(join(dir, 'ca.key'))]);
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Writes a new CA into a private temp folder, then renames the folder to `dev-ca`.
 * The folder rename is atomic and fails when `dev-ca` already holds files, so two
 * processes racing here never mix one's certificate with the other's key: the loser
 * discards its CA and reads the winner's.
 */
async function createStoredCa(dataDir: string, dir: string): Promise<PemCertificate> {
  await mkdir(dataDir, { recursive: true });
  const fresh = await generateCa();
  const tmp = await mkdtemp(join(dataDir, '.dev-ca-'));
  try {
    await writeDurably(join(tmp, 'ca.key'), fresh.keyPem, 0o600);
    await writeDurably(join(tmp, 'ca.crt'), fresh.certPem, 0o644);
    await rename(tmp, dir);
    return fresh;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    const winner = await readStoredCa(dir);
    if (winner === undefined) throw err;
    return winner;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

// fsync before the rename, or a crash could leave a renamed folder with empty files.
async function writeDurably(path: string, data: string, mode: number): Promise<void> {
  const file = await open(path, 'wx', mode);
  try {
    await file.writeFile(data);
    await file.sync();
  } finally {
    await file.close();
  }
}

async function generateCa(): Promise<PemCertificate> {
  const keys = await webcrypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify']);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: DEV_CA_SUBJECT,
    keys,
    notBefore: new Date(now - CLOCK_SKEW_MS),
    notAfter: new Date(now + DEV_CA_VALIDITY_DAYS * DAY_MS),
    signingAlgorithm: EC_SIGNING,
    extensions: [
      // pathLen 0: this CA signs leaves only, never another CA.
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportPkcs8Pem(keys.privateKey) };
}

async function openDevCa(stored: PemCertificate, certPath: string): Promise<DevCa> {
  const caCert = new x509.X509Certificate(stored.certPem);
  if (caCert.notAfter.getTime() <= Date.now()) {
    throw new Error(`dev CA ${certPath} expired on ${caCert.notAfter.toISOString()}; delete its folder to generate a new CA`);
  }
  assertKeyMatches(stored, certPath);
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(stored.keyPem), EC_KEY, false, ['sign']);
  // Built once: every leaf carries the same issuer and these extensions, and building
  // them per leaf cost about 1 ms of a ~6 ms mint.
  const issuer = caCert.subjectName;
  const caNotAfter = caCert.notAfter.getTime();
  const leafExtensions = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    // digitalSignature alone: ECDHE with an ECDSA key never uses keyEncipherment.
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
  ];

  return {
    certPem: stored.certPem,
    certPath,
    async issueLeaf(hostname: string): Promise<PemCertificate> {
      const host = normalizeHostname(hostname);
      if (!isValidHostname(host)) throw new Error(`cannot issue a certificate for invalid hostname ${JSON.stringify(hostname)}`);
      const keys = await webcrypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify']);
      const now = Date.now();
      const cert = await x509.X509CertificateGenerator.create({
        // JSON form, not a DN string, so a name can never be parsed as extra attributes.
        subject: [{ CN: [host] }],
        issuer,
        notBefore: new Date(now - CLOCK_SKEW_MS),
        // A leaf must not outlive its CA, or clients reject it near the CA's end.
        notAfter: new Date(Math.min(now + LEAF_VALIDITY_DAYS * DAY_MS, caNotAfter)),
        publicKey: keys.publicKey,
        signingKey: caKey,
        signingAlgorithm: EC_SIGNING,
        extensions: [
          ...leafExtensions,
          // Browsers ignore the CN; the SAN dNSName is what they match.
          new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: host }]),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
        ],
      });
      // Leaf only: clients already hold the CA, so sending it would only add bytes.
      return { certPem: cert.toString('pem') + '\n', keyPem: await exportPkcs8Pem(keys.privateKey) };
    },
  };
}

/** Refuses a `ca.key` that does not belong to `ca.crt`, which would mint certificates no client accepts. */
function assertKeyMatches(stored: PemCertificate, certPath: string): void {
  const fromCert = new NodeX509Certificate(stored.certPem).publicKey.export({ type: 'spki', format: 'der' });
  const fromKey = createPublicKey(stored.keyPem).export({ type: 'spki', format: 'der' });
  if (!fromCert.equals(fromKey)) throw new Error(`dev CA key does not match ${certPath}; delete its folder to generate a new CA`);
}

async function exportPkcs8Pem(key: webcrypto.CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY') + '\n';
}
