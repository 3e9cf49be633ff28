import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../store/index.js';
import { createAcmeIssuer, type AcmeIssuer, type AcmeIssuerOptions } from './acme-issuer.js';
import type { OrderedCertificate } from './acme-order.js';
import { loadOrCreateDevCa } from './dev-ca.js';
import { createSniResolver } from './sni-resolver.js';

// The issuer's decisions with a stand-in orderer that counts calls: no CA is
// needed to prove that nothing is ordered, or ordered only once.

const DAY_MS = 24 * 60 * 60 * 1000;
const MINUTE_MS = 60_000;

describe('acme issuer decisions', () => {
  let dir!: string;
  let store!: Store;
  const issuers: AcmeIssuer[] = [];
  let clock = Date.now();
  const rand = (): string => randomBytes(5).toString('hex');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-issuer-'));
    store = await openStore({ dataDir: dir });
  });
  after(async () => {
    await Promise.all(issuers.map((i) => i.close()));
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** An orderer that records hostnames and succeeds, or fails while `failing` is set. */
  function countingOrderer() {
    const calls: string[] = [];
    const state = { failing: false };
    const order = async (host: string): Promise<OrderedCertificate> => {
      calls.push(host);
      if (state.failing) throw new Error('Invalid response from http://x/: connection refused');
      return { certPem: `CERT ${host} ${calls.length}`, keyPem: 'KEY', expiresAt: clock + 90 * DAY_MS };
    };
    return { calls, state, order };
  }

  function newIssuer(order: (host: string) => Promise<OrderedCertificate>, over: Partial<AcmeIssuerOptions> = {}): AcmeIssuer {
    const issuer = createAcmeIssuer({
      store,
      directoryUrl: 'https://127.0.0.1:9/unused',
      sharedDomain: 'localhost',
      now: () => clock,
      orderer: order,
      ...over,
    });
    issuers.push(issuer);
    return issuer;
  }

  async function domain(verified: boolean, host = `d-${rand()}.example.com`): Promise<string> {
    const account = await store.accounts.create({ email: `${rand()}@svc.test`, name: 'O', plan: 'pro' });
    const d = await store.domains.create({ accountId: account.id, host, txtValue: 'svc-verify-x' });
    if (verified) await store.domains.markVerified(d.id);
    return host;
  }

  it('10,000 random, pending-domain and shared-domain names order nothing', async () => {
    const pending = await domain(false);
    const orderer = countingOrderer();
    const issuer = newIssuer(orderer.order);
    const resolver = createSniResolver({
      sharedDomain: 'localhost',
      devCa: await loadOrCreateDevCa(dir),
      isServedHost: issuer.isServedHost,
      onDemand: issuer.onDemand,
    });
    const shapes = [
      () => `${rand()}.example.com`,
      () => `${rand()}.${pending}`,
      () => pending,
      () => `x.${rand()}.localhost`,
      () => `${rand()}.${rand()}.org`,
    ];
    for (let i = 0; i < 10_000; i++) {
      const name = shapes[i % shapes.length]!();
      assert.equal(await resolver.contextFor(name), undefined, name);
      assert.equal(await issuer.onDemand(name), undefined, name);
    }
    assert.deepEqual(orderer.calls, []);
    assert.equal(issuer.stats().ordersStarted, 0);
  });

  it('concurrent onDemand calls share one order and all get its certificate', async () => {
    const host = await domain(true);
    const orderer = countingOrderer();
    const issuer = newIssuer(orderer.order);
    const certs = await Promise.all(Array.from({ length: 100 }, () => issuer.onDemand(host.toUpperCase())));
    assert.deepEqual(orderer.calls, [host]);
    assert.ok(certs.every((c) => c?.certPem === `CERT ${host} 1`));
  });

  it('a name under a verified domain is served; names at or under the shared domain never are', async () => {
    const host = await domain(true);
    const issuer = newIssuer(countingOrderer().order);
    assert.equal(await issuer.isServedHost(`deep.sub.${host}.`), true);
    // The store does not police hosts (domains/host.ts does); the issuer refuses shared-domain names anyway.
    const shared = await domain(true, `x${rand()}.localhost`);
    assert.equal(await issuer.isServedHost(shared), false);
    assert.equal(await issuer.isServedHost(`a.${shared}`), false);
    assert.equal(await issuer.isServedHost('bad_name.example.com'), false);
  });

  it('hostInUse must agree before anything is ordered', async () => {
    const host = await domain(true);
    const orderer = countingOrderer();
    const issuer = newIssuer(orderer.order, { hostInUse: (h) => h !== host });
    assert.equal(await issuer.isServedHost(host), false);
    assert.equal(await issuer.onDemand(host), undefined);
    assert.deepEqual(orderer.calls, []);
  });

  it('after a failure the host backs off 5 minutes, then orders again and recovers', async () => {
    const host = await domain(true);
    const orderer = countingOrderer();
    orderer.state.failing = true;
    const issuer = newIssuer(orderer.order);
    assert.equal(await issuer.onDemand(host), undefined);
    let [row] = await store.domains.byHost(host);
    assert.equal(row?.certState, 'failed');
    assert.match(row?.certError ?? '', /connection refused/);
    clock += 5 * MINUTE_MS - 1;
    assert.equal(await issuer.onDemand(host), undefined);
    assert.equal(orderer.calls.length, 1);
    clock += 1;
    orderer.state.failing = false;
    assert.ok(await issuer.onDemand(host));
    assert.equal(orderer.calls.length, 2);
    [row] = await store.domains.byHost(host);
    assert.equal(row?.certState, 'issued');
    assert.equal(row?.certError, undefined);
  });

  it('the per-minute cap defers orders beyond it without marking them failed', async () => {
    const hosts = [await domain(true), await domain(true), await domain(true)];
    const orderer = countingOrderer();
    const issuer = newIssuer(orderer.order, { maxOrdersPerMinute: 2 });
    const certs = [];
    for (const h of hosts) certs.push(await issuer.onDemand(h));
    assert.equal(certs.filter((c) => c !== undefined).length, 2);
    assert.equal(orderer.calls.length, 2);
    assert.equal((await store.domains.byHost(hosts[2]!))[0]?.certState, 'none');
    clock += MINUTE_MS;
    assert.ok(await issuer.onDemand(hosts[2]!));
  });

  it('renewDue renews due certificates, keeps serving on a failed renewal, and removes those of deleted domains', async () => {
    const due = await domain(true);
    const failing = await domain(true);
    const orphan = await domain(true);
    const put = (host: string) =>
      store.certificates.put({ host, certPem: `OLD ${host}`, keyPem: 'K', expiresAt: clock + 10 * DAY_MS, issuedAt: clock });
    for (const h of [due, failing, orphan]) await put(h);
    const [orphanRow] = await store.domains.byHost(orphan);
    await store.domains.delete(orphanRow!.accountId, orphanRow!.id);
    const orderer = countingOrderer();
    const issuer = newIssuer((h) => (h === failing ? Promise.reject(new Error('rate limited')) : orderer.order(h)));
    const report = await issuer.renewDue();
    assert.deepEqual(report, { renewed: 1, failed: 1, deferred: 0, removed: 1 });
    assert.equal((await store.certificates.get(due))?.certPem, `CERT ${due} 1`);
    assert.equal(await store.certificates.get(orphan), undefined);
    const [failingRow] = await store.domains.byHost(failing);
    assert.equal(failingRow?.certState, 'issued');
    assert.match(failingRow?.certError ?? '', /^renewal failed: rate limited/);
    assert.equal((await issuer.onDemand(failing))?.certPem, `OLD ${failing}`);
  });

  it('serving a stored certificate close to expiry starts one background renewal', async () => {
    const host = await domain(true);
    await store.certificates.put({ host, certPem: 'OLD', keyPem: 'K', expiresAt: clock + 5 * DAY_MS, issuedAt: clock });
    const orderer = countingOrderer();
    const issuer = newIssuer(orderer.order);
    assert.equal((await issuer.onDemand(host))?.certPem, 'OLD');
    await issuer.close(); // waits for the renewal in flight
    assert.deepEqual(orderer.calls, [host]);
    assert.equal((await store.certificates.get(host))?.certPem, `CERT ${host} 1`);
  });

  it('startRenewal runs a pass at once and close() waits for it', async () => {
    const host = await domain(true);
    await store.certificates.put({ host, certPem: 'OLD', keyPem: 'K', expiresAt: clock - 1, issuedAt: clock });
    const orderer = countingOrderer();
    const issuer = newIssuer(orderer.order);
    issuer.startRenewal(60 * MINUTE_MS);
    await issuer.close();
    assert.ok(orderer.calls.includes(host));
  });
});
