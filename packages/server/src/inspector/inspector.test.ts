import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { openStore, type NewRequestRecord, type RequestRecord, type Store } from '../store/index.js';
import { Inspector, type CapturedRequest, type InspectorOptions } from './inspector.js';

// The inspector against a real SQLite store and a fake clock. The loops are never started
// here: tests drive flush() and prune() themselves, so nothing depends on timing.

const log = pino({ level: 'silent' });
const T0 = Date.parse('2025-05-01T00:00:00.000Z');
const DAY_MS = 86_400_000;

describe('Inspector', () => {
  let dir: string;
  let store: Store;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-inspector-'));
    store = await openStore({ dataDir: dir });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const newAccount = () =>
    store.accounts.create({ email: `i-${Math.random().toString(36).slice(2)}@example.com`, name: 'I', plan: 'free' });
  const captured = (over: Partial<CapturedRequest> = {}): CapturedRequest => ({
    timestamp: T0,
    method: 'GET',
    path: '/',
    status: 200,
    durationMs: 3,
    bytes: 10,
    ip: '127.0.0.1',
    userAgent: 'test',
    proto: 'HTTP/1.1',
    host: 'app.localhost',
    ...over,
  });

  /** An inspector whose store counts insertBatch calls (each is one transaction) and can fail them. */
  function setup(opts: Partial<InspectorOptions> = {}) {
    let clock = T0;
    const batches: number[] = [];
    const fault = { fail: false, error: (): Error => new Error('store unavailable') };
    const requests = {
      ...store.requests,
      async insertBatch(records: readonly NewRequestRecord[]) {
        if (fault.fail) throw fault.error();
        batches.push(records.length);
        return store.requests.insertBatch(records);
      },
    };
    const inspector = new Inspector({ store: { ...store, requests }, log, now: () => clock, ...opts });
    return { inspector, batches, fault, advance: (ms: number) => (clock += ms) };
  }

  it('writes the queue in batches of batchSize, one transaction each, in capture order', async () => {
    const a = await newAccount();
    const { inspector, batches } = setup({ batchSize: 500 });
    for (let i = 0; i < 1200; i++) inspector.capture(captured({ accountId: a.id, timestamp: T0 + i, path: `/${i}` }));
    assert.deepEqual(inspector.stats(), { queueDepth: 1200, dropped: 0, written: 0, streamSubscribers: 0 });
    await inspector.flush();
    assert.deepEqual(batches, [500, 500, 200]);
    assert.deepEqual(inspector.stats(), { queueDepth: 0, dropped: 0, written: 1200, streamSubscribers: 0 });
    const newest = await store.requests.list(a.id, { limit: 2 });
    assert.deepEqual(
      newest.map((r) => r.path),
      ['/1199', '/1198'],
    );
  });

  it('drops captures beyond maxQueue and counts them, without blocking', async () => {
    const a = await newAccount();
    const { inspector } = setup({ maxQueue: 10 });
    for (let i = 0; i < 15; i++) inspector.capture(captured({ accountId: a.id }));
    assert.deepEqual(inspector.stats(), { queueDepth: 10, dropped: 5, written: 0, streamSubscribers: 0 });
    await inspector.flush();
    assert.deepEqual(inspector.stats(), { queueDepth: 0, dropped: 5, written: 10, streamSubscribers: 0 });
    inspector.capture(captured({ accountId: a.id }));
    assert.equal(inspector.stats().queueDepth, 1, 'room again once written');
  });

  it('a batch the store refuses is dropped and counted; later batches still go through', async () => {
    const a = await newAccount();
    const { inspector, fault } = setup();
    inspector.capture(captured({ accountId: a.id }));
    inspector.capture(captured({ accountId: a.id }));
    fault.fail = true;
    await inspector.flush();
    assert.deepEqual(inspector.stats(), { queueDepth: 0, dropped: 2, written: 0, streamSubscribers: 0 });
    fault.fail = false;
    inspector.capture(captured({ accountId: a.id }));
    await inspector.flush();
    assert.deepEqual(inspector.stats(), { queueDepth: 0, dropped: 2, written: 1, streamSubscribers: 0 });
  });

  it('a batch met by a locked or restarting store is kept and written once the store is back, nothing dropped', async () => {
    const a = await newAccount();
    const { inspector, fault, batches } = setup();
    fault.error = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    inspector.capture(captured({ accountId: a.id, path: '/kept-1' }));
    inspector.capture(captured({ accountId: a.id, path: '/kept-2' }));
    fault.fail = true;
    await inspector.flush();
    assert.deepEqual(inspector.stats(), { queueDepth: 2, dropped: 0, written: 0, streamSubscribers: 0 });
    fault.fail = false;
    await inspector.flush();
    assert.deepEqual(inspector.stats(), { queueDepth: 0, dropped: 0, written: 2, streamSubscribers: 0 });
    assert.deepEqual(batches, [2]);
    const stored = await store.requests.list(a.id, { limit: 10 });
    assert.deepEqual(stored.map((r) => r.path).sort(), ['/kept-1', '/kept-2']);
  });

  it('what a kept batch cannot fit back into the bounded queue is dropped and counted', async () => {
    const a = await newAccount();
    const { inspector, fault } = setup({ maxQueue: 3, batchSize: 3 });
    fault.error = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    for (let i = 0; i < 3; i++) inspector.capture(captured({ accountId: a.id }));
    fault.fail = true;
    const writing = inspector.flush();
    // Captured while the failing write is in flight: they take the room the batch would need.
    inspector.capture(captured({ accountId: a.id }));
    inspector.capture(captured({ accountId: a.id }));
    await writing;
    assert.deepEqual(inspector.stats(), { queueDepth: 3, dropped: 2, written: 0, streamSubscribers: 0 });
  });

  it('finds the owner of an offline pinned hostname; unknown hostnames are not kept', async () => {
    const a = await newAccount();
    const host = `pinned-${Math.random().toString(36).slice(2, 8)}.localhost`;
    const tunnel = await store.tunnels.upsertOnline({
      accountId: a.id,
      hostname: host,
      pinned: true,
      localAddr: 'localhost:3000',
      agentVersion: '0',
      agentIp: '127.0.0.1',
      nodeId: 'n',
    });
    await store.tunnels.setOffline(tunnel.id);
    const { inspector } = setup();
    inspector.capture(captured({ host, status: 404 }));
    inspector.capture(captured({ host: 'nobody-owns-this.localhost', status: 404 }));
    await inspector.flush();
    const list = await store.requests.list(a.id, { limit: 10 });
    assert.equal(list.length, 1);
    assert.equal(list[0]?.tunnelId, tunnel.id);
    assert.equal(list[0]?.status, 404);
    assert.deepEqual(inspector.stats(), { queueDepth: 0, dropped: 0, written: 1, streamSubscribers: 0 });
  });

  it('retention deletes records older than maxAgeMs', async () => {
    const a = await newAccount();
    const { inspector, advance } = setup({ retention: { maxAgeMs: 3 * DAY_MS } });
    inspector.capture(captured({ accountId: a.id, timestamp: T0, path: '/old' }));
    inspector.capture(captured({ accountId: a.id, timestamp: T0 + 2 * DAY_MS, path: '/new' }));
    await inspector.flush();
    advance(3 * DAY_MS + 1);
    await inspector.prune();
    assert.deepEqual(
      (await store.requests.list(a.id, { limit: 10 })).map((r) => r.path),
      ['/new'],
    );
  });

  it('retention keeps only the newest maxPerAccount records per account', async () => {
    const a = await newAccount();
    const b = await newAccount();
    const { inspector } = setup({ retention: { maxPerAccount: 3, maxAgeMs: 3650 * DAY_MS } });
    for (let i = 0; i < 5; i++) inspector.capture(captured({ accountId: a.id, timestamp: T0 + i, path: `/a${i}` }));
    inspector.capture(captured({ accountId: b.id, path: '/b' }));
    await inspector.flush();
    await inspector.prune();
    assert.deepEqual(
      (await store.requests.list(a.id, { limit: 10 })).map((r) => r.path),
      ['/a4', '/a3', '/a2'],
    );
    assert.equal((await store.requests.list(b.id, { limit: 10 })).length, 1);
  });

  it("publishes each committed record to its account's subscribers, exactly as list returns it", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const host = `live-${Math.random().toString(36).slice(2, 8)}.localhost`;
    const tunnel = await store.tunnels.upsertOnline({
      accountId: a.id,
      hostname: host,
      pinned: true,
      localAddr: 'localhost:3000',
      agentVersion: '0',
      agentIp: '127.0.0.1',
      nodeId: 'n',
    });
    const { inspector, fault } = setup();
    const seenByA: RequestRecord[] = [];
    const seenByB: RequestRecord[] = [];
    const seenByA2: RequestRecord[] = [];
    const batchesOfA: number[] = [];
    const stopA = inspector.live.subscribe(a.id, (records) => {
      batchesOfA.push(records.length);
      seenByA.push(...records);
    });
    inspector.live.subscribe(b.id, (records) => seenByB.push(...records));
    inspector.live.subscribe(a.id, () => {
      throw new Error('a broken subscriber');
    });
    const stopA2 = inspector.live.subscribe(a.id, (records) => seenByA2.push(...records));
    assert.equal(inspector.stats().streamSubscribers, 4);
    inspector.capture(captured({ accountId: a.id, timestamp: T0 + 1.7, durationMs: 2.6, path: '/known-owner', host: 'APP.localhost' }));
    inspector.capture(captured({ host, path: '/owner-resolved' }));
    inspector.capture(captured({ accountId: b.id, path: '/b' }));
    await inspector.flush();
    const listed = await store.requests.list(a.id, { limit: 10 });
    assert.deepEqual(
      seenByA.map((r) => r.path),
      ['/known-owner', '/owner-resolved'],
      'in capture order',
    );
    const newestFirst = [...seenByA].sort((x, y) => (x.id < y.id ? 1 : -1));
    assert.deepEqual(newestFirst, listed, 'same ids, owners and stored values');
    assert.equal(seenByA[1]?.tunnelId, tunnel.id);
    assert.deepEqual(batchesOfA, [2], "one call per batch with the account's records");
    assert.equal(seenByA2.length, 2, 'a subscriber after a broken one still gets its records');
    seenByA2.forEach((record, i) => assert.equal(record, seenByA[i], 'the same record objects for every subscriber of the account'));
    stopA2();
    assert.deepEqual(seenByB, await store.requests.list(b.id, { limit: 10 }));
    fault.fail = true;
    inspector.capture(captured({ accountId: a.id, path: '/never-stored' }));
    await inspector.flush();
    assert.equal(seenByA.length, 2, 'a batch the store refused is not published');
    fault.fail = false;
    stopA();
    stopA();
    assert.equal(inspector.stats().streamSubscribers, 2);
    inspector.capture(captured({ accountId: a.id, path: '/after' }));
    await inspector.flush();
    assert.equal(seenByA.length, 2, 'nothing after unsubscribing');
  });

  it('stop writes what is still queued', async () => {
    const a = await newAccount();
    const { inspector } = setup();
    inspector.start();
    inspector.capture(captured({ accountId: a.id }));
    await inspector.stop();
    assert.equal((await store.requests.list(a.id, { limit: 10 })).length, 1);
  });

  it('stop retries a store that is out and writes the records once it is back within the time given', async () => {
    const a = await newAccount();
    const { inspector, fault } = setup();
    fault.error = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    fault.fail = true;
    inspector.capture(captured({ accountId: a.id, path: '/at-shutdown' }));
    const stopping = inspector.stop({ retryForMs: 60_000 });
    // Back after the first attempt failed: the retry, not the first write, stores it.
    await new Promise((resolve) => setImmediate(resolve));
    fault.fail = false;
    await stopping;
    assert.deepEqual(inspector.stats(), { queueDepth: 0, dropped: 0, written: 1, streamSubscribers: 0 });
    assert.deepEqual(
      (await store.requests.list(a.id, { limit: 10 })).map((r) => r.path),
      ['/at-shutdown'],
    );
  });

  it('stop gives up when the store stays out, and counts and logs what it dropped', async () => {
    const a = await newAccount();
    const lines: string[] = [];
    const { inspector, fault } = setup({ log: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }) });
    fault.error = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    fault.fail = true;
    for (let i = 0; i < 3; i++) inspector.capture(captured({ accountId: a.id }));
    await inspector.stop({ retryForMs: 250 });
    assert.deepEqual(inspector.stats(), { queueDepth: 0, dropped: 3, written: 0, streamSubscribers: 0 });
    const dropped = lines.map((l) => JSON.parse(l) as { msg: string; count?: number }).find((l) => l.msg.includes('dropped at shutdown'));
    assert.equal(dropped?.count, 3);
  });
});
