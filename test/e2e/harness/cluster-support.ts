import assert from 'node:assert/strict';
import { it } from 'node:test';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startServer, type ServerOptions, type TestServer } from './index.js';

// Several svc-server processes sharing one real PostgreSQL (SVC_TEST_DATABASE_URL), each in its
// own fresh schema per test file, so runs never see each other's nodes, routes or accounts.

export const CLUSTER_SECRET = 'e2e-cluster-secret-0123456789';

export interface TestDatabase {
  url: string;
  /** Runs one statement in the schema (reads the cluster tables directly). */
  query(text: string, values?: unknown[]): Promise<Array<Record<string, unknown>>>;
  drop(): Promise<void>;
}

/** A fresh schema on the test PostgreSQL and a URL whose connections use it; `drop` removes it. */
export async function freshDatabase(baseUrl: string): Promise<TestDatabase> {
  const schema = `svc_e2e_${randomBytes(6).toString('hex')}`;
  const admin = async (text: string, values: unknown[] = [], url = baseUrl): Promise<Array<Record<string, unknown>>> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows as Array<Record<string, unknown>>;
    } finally {
      await client.end();
    }
  };
  await admin(`create schema ${schema}`);
  const scoped = new URL(baseUrl);
  scoped.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: scoped.toString(),
    query: (text, values) => admin(text, values, scoped.toString()),
    drop: async () => void (await admin(`drop schema ${schema} cascade`)),
  };
}

/** Starts one node of the cluster: the shared store, its own id, an internal port the OS picks. */
export function startNode(
  databaseUrl: string,
  nodeId: string,
  options: { first?: boolean; secret?: string; env?: Record<string, string>; httpPort?: number; restartOf?: TestServer } = {},
): Promise<TestServer> {
  const serverOptions: ServerOptions = {
    expectToken: options.first ?? false,
    ...(options.httpPort === undefined ? {} : { httpPort: options.httpPort }),
    // A restart: the same data dir and public ports, as a node behind a load balancer comes back.
    ...(options.restartOf
      ? { dataDir: options.restartOf.dataDir, httpPort: options.restartOf.httpPort, httpsPort: options.restartOf.httpsPort }
      : {}),
    env: {
      SVC_DATABASE_URL: databaseUrl,
      SVC_NODE_ID: nodeId,
      SVC_NODE_URL: 'http://127.0.0.1:0',
      SVC_CLUSTER_SECRET: options.secret ?? CLUSTER_SECRET,
      SVC_LOG_LEVEL: 'info',
      ...options.env,
    },
  };
  return startServer(serverOptions);
}

/** Polls `probe` until it answers true: for state that travels between processes (routes, records). */
export async function until(what: string, probe: () => Promise<boolean>, attempts = 200): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail(`gave up waiting: ${what}`);
}

/**
 * Declares a suite that needs the test PostgreSQL. Without SVC_TEST_DATABASE_URL it is skipped with
 * a notice on a developer's machine, and fails under CI, where a missing package must not pass quietly.
 */
export function postgresSuite(title: string, suite: (baseUrl: string) => void): void {
  const baseUrl = process.env.SVC_TEST_DATABASE_URL;
  if (baseUrl !== undefined && baseUrl !== '') {
    suite(baseUrl);
    return;
  }
  if (process.env.CI === 'true') {
    it(title, () => assert.fail('SVC_TEST_DATABASE_URL is unset; CI must run the PostgreSQL suites'));
    return;
  }
  const notice = `skipping "${title}": set SVC_TEST_DATABASE_URL (apt-get install postgresql)`;
  process.stderr.write(`${notice}\n`);
  it(title, { skip: notice }, () => {});
}
