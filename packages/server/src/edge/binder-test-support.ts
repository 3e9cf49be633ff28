import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { pino } from 'pino';
import { openStore, type Store } from '../store/index.js';
import { Binder, type BinderDeps } from './binder.js';
import type { EdgeSession } from './edge-session.js';
import { Router } from './router.js';

// What the Binder's tests share: a real SQLite store, a Binder with quiet defaults, and the
// least of a session that bind() touches.

/**
 * Call in a describe() body: opens a real SQLite store in a fresh directory before the suite's
 * tests, closes and removes it after. The returned object holds the store by the time tests run.
 */
export function storeSuite(prefix: string): { store: Store } {
  const suite = {} as { store: Store; dir?: string };
  before(async () => {
    suite.dir = await mkdtemp(join(tmpdir(), prefix));
    suite.store = await openStore({ dataDir: suite.dir });
  });
  after(async () => {
    await suite.store?.close();
    if (suite.dir) await rm(suite.dir, { recursive: true, force: true });
  });
  return suite;
}

/** A Binder with its own router, a silent log and the shared domain `localhost`; `deps` adds to or replaces those. */
export function testBinder(deps: Pick<BinderDeps, 'store' | 'limitsFor'> & Partial<BinderDeps>): Binder {
  return new Binder({
    router: new Router(),
    sharedDomain: 'localhost',
    nodeId: 'node-test',
    log: pino({ level: 'silent' }),
    publicUrl: (hostname) => `https://${hostname}`,
    ...deps,
  });
}

/** The least of an EdgeSession that bind() touches (it never sends on it); `release` sees each released tunnel. */
export function fakeSession(accountId: string, release: (tunnelId: string) => void = () => undefined): EdgeSession {
  return {
    accountId,
    agentVersion: 'test',
    agentIp: '127.0.0.1',
    isClosed: false,
    bindings: new Map(),
    release,
  } as unknown as EdgeSession;
}
