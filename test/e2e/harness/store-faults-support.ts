import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { api, Proc, REPO_ROOT, visit, type TestServer } from './index.js';

// Shared by the store fault tests: visitors that never stop while the store fails, a second
// process holding SQLite's write lock, and the metrics the tests read.

/** Visitors one after another through the edge, with every status (or error) counted. */
export class VisitorLoop {
  readonly statuses = new Map<number, number>();
  readonly errors: string[] = [];
  private stopped = false;
  private readonly running: Promise<void>;

  /**
   * `paceMs` between visits keeps the load under a bound the case depends on (the inspector's
   * queue), whatever the speed of the machine and the data path.
   */
  constructor(
    server: TestServer,
    hostname: string,
    private readonly paceMs = 0,
  ) {
    this.running = this.run(server, hostname);
  }

  /** Visits answered so far, any status. */
  get count(): number {
    let n = 0;
    for (const c of this.statuses.values()) n += c;
    return n + this.errors.length;
  }

  /** Answers that were not 200 (status: count), and transport errors. */
  failures(): { statuses: Record<string, number>; errors: string[] } {
    const statuses: Record<string, number> = {};
    for (const [status, c] of this.statuses) if (status !== 200) statuses[status] = c;
    return { statuses, errors: this.errors };
  }

  /** Resolves once `n` more visits have been answered. */
  async more(n: number): Promise<void> {
    const target = this.count + n;
    while (this.count < target) await new Promise((resolve) => setImmediate(resolve));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async run(server: TestServer, hostname: string): Promise<void> {
    while (!this.stopped) {
      try {
        const r = await visit(server, hostname, '/during-fault');
        this.statuses.set(r.status, (this.statuses.get(r.status) ?? 0) + 1);
      } catch (error) {
        this.errors.push(String(error));
      }
      if (this.paceMs > 0) await delay(this.paceMs);
    }
  }
}

/** A value of the server's /metrics, e.g. `svc_inspector_dropped_total`. */
export async function metric(server: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line, `${name} missing from /metrics`);
  return Number(line.split(' ')[1]);
}

/** POST /v1/keys: a small write through the API's store. */
export function writeKey(server: TestServer, token: string, description: string): ReturnType<typeof api> {
  return api(server, 'POST', '/v1/keys', { token }, { description });
}

/** Records of the account in the inspector, newest first. */
export async function inspectorPaths(server: TestServer, token: string): Promise<string[]> {
  const page = (await api(server, 'GET', '/v1/requests?limit=200', { token })).body as { requests: Array<{ path: string }> };
  return page.requests.map((r) => r.path);
}

// The lock holder: a plain better-sqlite3 connection in another process. Reads commands on
// stdin ("release"), answers on stdout.
const HOLDER = `
const Database = require(process.argv[1]);
const db = new Database(process.argv[2]);
db.exec('BEGIN IMMEDIATE');
console.log('locked');
process.stdin.setEncoding('utf8');
process.stdin.on('data', (text) => {
  if (!text.includes('release')) return;
  db.exec('ROLLBACK');
  console.log('integrity ' + db.pragma('integrity_check', { simple: true }));
  db.close();
  console.log('released');
  process.exit(0);
});
`;

/** A second process holding SQLite's write lock (BEGIN IMMEDIATE) on `file` until released. */
export class SqliteLockHolder {
  private constructor(private readonly proc: Proc) {}

  static async lock(file: string): Promise<SqliteLockHolder> {
    const driver = createRequire(path.join(REPO_ROOT, 'packages/server/package.json')).resolve('better-sqlite3');
    const child = spawn(process.execPath, ['-e', HOLDER, driver, file], { stdio: ['pipe', 'pipe', 'pipe'] });
    const proc = new Proc(child, 'sqlite-lock-holder');
    await proc.waitForLine(/^locked$/);
    return new SqliteLockHolder(proc);
  }

  /** Rolls back, runs `PRAGMA integrity_check` and exits; resolves with its answer. */
  async release(): Promise<string> {
    this.proc.child.stdin!.write('release\n');
    const match = await this.proc.waitForLine(/^integrity (.*)$/);
    await this.proc.exited;
    return match[1]!;
  }

  async close(): Promise<void> {
    await this.proc.stop('SIGKILL');
  }
}
