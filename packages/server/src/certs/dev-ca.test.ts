import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DEV_CA_SUBJECT, loadOrCreateDevCa } from './dev-ca.js';
import { x509 } from './x509.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

let root: string;
let counter = 0;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'svc-dev-ca-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});
/** A fresh, not yet existing data dir per test. */
function dataDir(): string {
  counter += 1;
  return join(root, `data-${counter}`);
}

test('first start writes dev-ca/ca.crt and a ca.key readable only by its owner', async () => {
  const dir = dataDir();
  const ca = await loadOrCreateDevCa(dir);
  assert.equal(ca.certPath, join(dir, 'dev-ca', 'ca.crt'));
  assert.equal(await readFile(ca.certPath, 'utf8'), ca.certPem);
  const key = await readFile(join(dir, 'dev-ca', 'ca.key'), 'utf8');
  assert.match(key, /^-----BEGIN PRIVATE KEY-----\n/);
  assert.equal((await stat(join(dir, 'dev-ca', 'ca.key'))).mode & 0o777, 0o600);
});

test('the CA is a ten-year CA:true certificate allowed to sign certificates', async () => {
  const ca = await loadOrCreateDevCa(dataDir());
  const cert = new x509.X509Certificate(ca.certPem);
  assert.equal(cert.subject, DEV_CA_SUBJECT);
  const basic = cert.getExtension(x509.BasicConstraintsExtension);
  assert.equal(basic?.ca, true);
  assert.equal(basic?.critical, true);
  const usage = cert.getExtension(x509.KeyUsagesExtension);
  assert.ok(usage !== null && (usage.usages & x509.KeyUsageFlags.keyCertSign) !== 0);
  const years = (cert.notAfter.getTime() - Date.now()) / (365 * DAY_MS);
  assert.ok(years > 9.9 && years < 10.1, `${years} years`);
});

test('a second start with the same data dir reuses the CA', async () => {
  const dir = dataDir();
  const first = await loadOrCreateDevCa(dir);
  const second = await loadOrCreateDevCa(dir);
  assert.equal(new X509Certificate(second.certPem).fingerprint256, new X509Certificate(first.certPem).fingerprint256);
  // The reloaded key must be the stored one: its leaves chain to the first CA.
  const leaf = new X509Certificate((await second.issueLeaf('abc.localhost')).certPem);
  assert.equal(leaf.verify(new X509Certificate(first.certPem).publicKey), true);
});

test('concurrent first starts in one process agree on one CA and leave no temp folders', async () => {
  const dir = dataDir();
  const cas = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateDevCa(dir)));
  const stored = await readFile(join(dir, 'dev-ca', 'ca.crt'), 'utf8');
  for (const ca of cas) {
    assert.equal(ca.certPem, stored);
    const leaf = new X509Certificate((await ca.issueLeaf('abc.localhost')).certPem);
    assert.equal(leaf.verify(new X509Certificate(stored).publicKey), true);
  }
  assert.deepEqual(await readdir(dir), ['dev-ca']);
});

test('concurrent first starts in separate processes agree on one CA', async () => {
  const dir = dataDir();
  const moduleUrl = new URL(import.meta.url.endsWith('.ts') ? './dev-ca.ts' : './dev-ca.js', import.meta.url).href;
  const script = `const { loadOrCreateDevCa } = await import(${JSON.stringify(moduleUrl)});
const ca = await loadOrCreateDevCa(${JSON.stringify(dir)});
process.stdout.write(ca.certPem);`;
  // The same loader flags as this test (e.g. --import tsx), minus the test runner's own.
  const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--test'));
  const run = promisify(execFile);
  const cwd = fileURLToPath(new URL('.', import.meta.url));
  const outputs = await Promise.all(
    Array.from({ length: 4 }, () => run(process.execPath, [...execArgv, '--input-type=module', '-e', script], { cwd })),
  );
  const stored = await readFile(join(dir, 'dev-ca', 'ca.crt'), 'utf8');
  for (const { stdout } of outputs) assert.equal(stdout, stored);
});

test('a leaf names exactly its hostname, is for serverAuth, lasts at most 397 days and chains to the CA', async () => {
  const ca = await loadOrCreateDevCa(dataDir());
  const { certPem, keyPem } = await ca.issueLeaf('abc.localhost');
  assert.equal(certPem.match(/BEGIN CERTIFICATE/g)?.length, 1);
  assert.match(keyPem, /^-----BEGIN PRIVATE KEY-----\n/);
  const leaf = new X509Certificate(certPem);
  const caCert = new X509Certificate(ca.certPem);
  assert.equal(leaf.subjectAltName, 'DNS:abc.localhost');
  assert.equal(leaf.ca, false);
  assert.deepEqual(leaf.keyUsage, [SERVER_AUTH]); // Node names the extended key usage keyUsage
  assert.equal(leaf.checkIssued(caCert), true);
  assert.equal(leaf.verify(caCert.publicKey), true);
  const days = (Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)) / DAY_MS;
  assert.ok(days <= 397 && days > 89, `${days} days`);
});

test('a leaf hostname is normalized before it is signed', async () => {
  const ca = await loadOrCreateDevCa(dataDir());
  const leaf = new X509Certificate((await ca.issueLeaf('ABC.Localhost.')).certPem);
  assert.equal(leaf.subjectAltName, 'DNS:abc.localhost');
});

test('issueLeaf refuses a name that is not a DNS hostname', async () => {
  const ca = await loadOrCreateDevCa(dataDir());
  for (const bad of ['*.localhost', 'a,CN=evil', '127.0.0.1', '']) {
    await assert.rejects(ca.issueLeaf(bad), /invalid hostname/, bad);
  }
});

test('a dev-ca folder missing its key fails with a message instead of a new CA', async () => {
  const dir = dataDir();
  await loadOrCreateDevCa(dir);
  await rm(join(dir, 'dev-ca', 'ca.key'));
  await assert.rejects(loadOrCreateDevCa(dir), /incomplete/);
});
