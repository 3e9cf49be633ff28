import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { eventually } from './harness/api-helpers.js';
import { REPO_ROOT, startAgent, startOrigin, startServer, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { inspectorPaths, metric, VisitorLoop, writeKey } from './harness/store-faults-support.js';

// PostgreSQL stopped, restarted and started again under traffic, on a cluster of this test's
// own: visitors keep getting 200, the API answers 503 with Retry-After while the database is
// away, the inspector keeps its records and writes them when it is back, and a server told to
// stop while the database is away retries its last writes until it returns.

const execFileAsync = promisify(execFile);
const SCRIPT = path.join(REPO_ROOT, 'scripts/start-test-postgres.sh');

interface Cluster {
  url: string;
  dir: string;
  ctl(...args: string[]): Promise<void>;
}

async function startCluster(): Promise<Cluster | string> {
  let started: { stdout: string; stderr: string };
  try {
    started = await execFileAsync(SCRIPT);
  } catch (error) {
    return `no PostgreSQL to start (${String((error as { stderr?: string }).stderr ?? error)
      .trim()
      .split('\n')
      .pop()})`;
  }
  const dir = /data dir: (\S+)/.exec(started.stderr)?.[1];
  assert.ok(dir, started.stderr);
  const url = started.stdout.trim();
  const port = new URL(url).port;
  // The options the script started it with, for a start after a stop.
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c full_page_writes=off`;
  return {
    url,
    dir,
    async ctl(...args) {
      // A server started without -l writes to pg_ctl's stdout, and the pipe would never close.
      const log = ['-l', path.join(dir, 'server.log')];
      const full = args[0] === 'start' ? [...args, '-w', ...log, '-o', options] : args[0] === 'restart' ? [...args, ...log] : args;
      await execFileAsync(SCRIPT, ['ctl', dir, ...full]);
    },
  };
}

describe('PostgreSQL stopped and restarted under traffic', () => {
  let cluster: Cluster | undefined;
  let skip: string | false = false;
  let server: TestServer | undefined;
  /** The first server, once stopped and replaced (its data dir is removed last). */
  let first: TestServer | undefined;
  let origin: TestOrigin | undefined;
  let agent: TestAgent | undefined;
  before(async () => {
    const started = await startCluster();
    if (typeof started === 'string') {
      skip = started;
      if (process.env.CI === 'true') assert.fail(`${skip}; CI installs postgresql and must run this test`);
      return;
    }
    cluster = started;
    server = await startServer({ env: { SVC_DATABASE_URL: cluster.url } });
    origin = await startOrigin();
    agent = await startAgent(server, { token: server.token, target: origin.port });
  });
  after(async () => {
    await agent?.close();
    await origin?.close();
    await server?.close();
    await first?.close();
    if (cluster) await execFileAsync(SCRIPT, ['stop', cluster.dir]);
  });

  it('keeps proxying, answers the API 503 with Retry-After while it is away, and catches up when it is back', async (t) => {
    if (skip) return t.skip(skip);
    const token = server!.token!;
    const visitors = new VisitorLoop(server!, agent!.hostname);
    await visitors.more(20);

    await cluster!.ctl('stop', '-m', 'fast');
    const refused = await writeKey(server!, token, 'while PostgreSQL is away');
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.headers.get('retry-after'), '5');
    await server!.proc.waitForLine(/inspector store unavailable; batch kept for the next write/);
    const atStop = visitors.count;
    await visitors.more(50);
    const duringStop = visitors.count - atStop;
    await cluster!.ctl('start');

    // Idle pool connections the restart killed are replaced on their own; no restart of ours.
    await eventually(
      () => writeKey(server!, token, 'after the start'),
      (r) => r.status === 201,
      'the API writes again',
    );
    await server!.proc.waitForLine(/inspector writes recovered/);

    // A plain restart in the middle of traffic.
    const atRestart = visitors.count;
    await cluster!.ctl('restart', '-m', 'fast', '-w');
    await visitors.more(20);
    const duringRestart = visitors.count - atRestart;
    await eventually(
      () => writeKey(server!, token, 'after the restart'),
      (r) => r.status === 201,
      'the API writes after a restart',
    );
    await visitors.stop();

    assert.ok(duringStop >= 50 && duringRestart >= 20);
    assert.deepEqual(visitors.failures(), { statuses: {}, errors: [] });
    await eventually(
      () => metric(server!, 'svc_inspector_written_total'),
      (written) => written >= visitors.count,
      `all ${visitors.count} visits recorded`,
    );
    assert.equal(await metric(server!, 'svc_inspector_dropped_total'), 0);
    const lost = [...agent!.proc.lines, ...agent!.proc.stderrLines].filter((l) => /lost|reconnect/i.test(l));
    assert.deepEqual(lost, []);
  });

  it('retries its last inspector writes at shutdown until PostgreSQL is back', async (t) => {
    if (skip) return t.skip(skip);
    const token = server!.token!;
    await cluster!.ctl('stop', '-m', 'fast');
    const visitors = new VisitorLoop(server!, agent!.hostname);
    await visitors.more(30);
    await visitors.stop();
    await server!.proc.waitForLine(/inspector store unavailable; batch kept for the next write/);
    await agent!.close();
    agent = undefined;

    // SIGTERM while the database is away; it comes back during the final write's retries.
    server!.proc.child.kill('SIGTERM');
    await server!.proc.waitForLine(/new connections refused/);
    await cluster!.ctl('start');
    const exit = await server!.proc.exited;
    assert.equal(exit.code, 0, server!.proc.output);
    assert.ok(!server!.proc.output.includes('dropped at shutdown'), 'nothing dropped at shutdown');

    // A new server on the same database shows the records taken while it was away.
    first = server!;
    server = await startServer({ dataDir: first.dataDir, env: { SVC_DATABASE_URL: cluster!.url } });
    const paths = await inspectorPaths(server, token);
    assert.equal(paths.filter((p) => p === '/during-fault').length >= 30 + 50, true, `records kept (${paths.length})`);
  });
});
