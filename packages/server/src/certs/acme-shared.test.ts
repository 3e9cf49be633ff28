import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Store } from '../store/index.js';
import { createAcmeIssuer, type AcmeIssuer } from './acme-issuer.js';
import type { OrderedCertificate } from './acme-order.js';
import { ChallengeAnswers, ORDER_LEASE_MS } from './acme-shared.js';

// Two issuers on one store stand for two nodes of a cluster: answers given by either, and one
// order per hostname. The store contract runs the same repo on PostgreSQL; the e2e
// cluster-acme test runs real nodes on PostgreSQL against Pebble.

const DAY_MS = 24 * 60 * 60 * 1000;

describe('acme issuers sharing one store', () => {
  let dir!: string;
  let store!: Store;
  const issuers: AcmeIssuer[] = [];
  const rand = (): string => randomBytes(5).toString('hex');

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-shared-'));
    store = await openStore({ dataDir: dir });
  });
  after(async () => {
    await Promise.all(issuers.map((i) => i.close()));
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** An orderer whose orders finish (or fail) when the test says so. */
  function gatedOrderer() {
    const calls: string[] = [];
    let open!: (ok: boolean) => void;
    const gate = new Promise<boolean>((resolve) => (open = resolve));
    let entered!: () => void;
    const started = new Promise<void>((resolve) => (entered = resolve));
    const order = async (host: string): Promise<OrderedCertificate> => {
      calls.push(host);
      entered();
      if (!(await gate)) throw new Error('urn:ietf:params:acme:error:connection');
      return { certPem: `CERT ${host} ${calls.length}`, keyPem: 'KEY', expiresAt: Date.now() + 90 * DAY_MS };
    };
    return { calls, order, started, open: (ok: boolean) => open(ok) };
  }

  /** `onWait` is called when the node finds another holding the lease (it then waits for its certificate). */
  function node(nodeId: string, order: (host: string) => Promise<OrderedCertificate>, onWait = (): void => undefined): AcmeIssuer {
    const repo = {
      ...store.acmeShared,
      orderHolder: async (host: string, now: number) => {
        const holder = await store.acmeShared.orderHolder(host, now);
        if (holder !== undefined) onWait();
        return holder;
      },
    };
    const issuer = createAcmeIssuer({
      store,
      directoryUrl: 'https://127.0.0.1:9/unused',
      sharedDomain: 'localhost',
      orderer: order,
      shared: { repo, nodeId, waitPollMs: 10 },
    });
    issuers.push(issuer);
    return issuer;
  }

  async function verifiedHost(): Promise<string> {
    const host = `d-${rand()}.example.com`;
    const account = await store.accounts.create({ email: `${rand()}@svc.test`, name: 'O', plan: 'pro' });
    const d = await store.domains.create({ accountId: account.id, host, txtValue: 'svc-verify-x' });
    await store.domains.markVerified(d.id);
    return host;
  }

  /**
   * Node A orders `host` and holds its order open; node B asks for the same name. Resolves once B
   * waits on A's lease, with both orderers, node B and both nodes' answers.
   */
  async function bWaitingOnA(host: string) {
    const [a, b] = [gatedOrderer(), gatedOrderer()];
    let waiting!: () => void;
    const bWaits = new Promise<void>((resolve) => (waiting = resolve));
    const [nodeA, nodeB] = [node(`a-${rand()}`, a.order), node(`b-${rand()}`, b.order, waiting)];
    const first = nodeA.onDemand(host);
    await a.started;
    const second = nodeB.onDemand(host);
    // B found A's lease before A's order ends: what follows is B waiting, not B arriving late.
    await bWaits;
    return { a, b, nodeB, both: Promise.all([first, second]) };
  }

  it('while one node orders a name, the other places no order and gets the certificate it stored', async () => {
    const host = await verifiedHost();
    const { a, b, nodeB, both } = await bWaitingOnA(host);
    a.open(true);
    const [certA, certB] = await both;
    assert.equal(certA?.certPem, `CERT ${host} 1`);
    assert.equal(certB?.certPem, certA?.certPem);
    assert.deepEqual(a.calls, [host]);
    assert.deepEqual(b.calls, []);
    assert.equal(nodeB.stats().ordersStarted, 0);
    assert.equal(await store.acmeShared.orderHolder(host, Date.now()), undefined, 'the lease was given back');
  });

  it('when the other node’s order fails, the waiting node gets nothing and orders nothing', async () => {
    const host = await verifiedHost();
    const { a, b, both } = await bWaitingOnA(host);
    a.open(false);
    assert.deepEqual(await both, [undefined, undefined]);
    assert.deepEqual(b.calls, []);
    assert.equal((await store.domains.byHost(host))[0]?.certState, 'failed');
  });

  it('a node restarted mid-order takes its own lease back; another node waits for it', async () => {
    const host = await verifiedHost();
    const nodeId = `a-${rand()}`;
    assert.equal(await store.acmeShared.acquireOrder(host, nodeId, Date.now(), Date.now() + ORDER_LEASE_MS), true);
    const a = gatedOrderer();
    const restarted = node(nodeId, a.order);
    a.open(true);
    assert.equal((await restarted.onDemand(host))?.certPem, `CERT ${host} 1`);
    assert.deepEqual(a.calls, [host]);
  });

  it('an answer published on one node is given by another until it is withdrawn; without sharing only by its own', async () => {
    const sharing = { repo: store.acmeShared, nodeId: 'x' };
    const [onA, onB] = [new ChallengeAnswers(sharing, Date.now, undefined), new ChallengeAnswers(sharing, Date.now, undefined)];
    const token = randomBytes(24).toString('base64url');
    assert.equal(await onB.answer(token), undefined);
    await onA.publish(token, `${token}.thumbprint`);
    assert.equal(onA.answer(token), `${token}.thumbprint`, 'from memory, without a query');
    assert.equal(await onB.answer(token), `${token}.thumbprint`);
    await onA.publish(token, undefined);
    assert.equal(await onB.answer(token), undefined);

    const [aloneA, aloneB] = [new ChallengeAnswers(undefined, Date.now, undefined), new ChallengeAnswers(undefined, Date.now, undefined)];
    const other = randomBytes(24).toString('base64url');
    await aloneA.publish(other, 'ka');
    assert.equal(aloneA.answer(other), 'ka');
    assert.equal(aloneB.answer(other), undefined);
    assert.equal(await store.acmeShared.challenge(other, Date.now()), undefined, 'a single node writes nothing');
  });
});
