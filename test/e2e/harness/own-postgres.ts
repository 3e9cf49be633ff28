import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './index.js';

// A PostgreSQL of one test's own (scripts/start-test-postgres.sh), which the test may stop and
// start again: a store outage without touching the database other tests share.

const execFileAsync = promisify(execFile);
const SCRIPT = path.join(REPO_ROOT, 'scripts/start-test-postgres.sh');

export interface OwnPostgres {
  url: string;
  /** Stops the server at once (`pg_ctl stop -m fast`): connections are cut, new ones refused. */
  stop(): Promise<void>;
  /** Starts it again with the options it was made with, and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops it for good and removes its data dir. */
  remove(): Promise<void>;
}

/** Makes and starts a PostgreSQL of the caller's own, or answers why it cannot (no postgresql installed). */
export async function startOwnPostgres(): Promise<OwnPostgres | string> {
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
  // A server started without -l writes to pg_ctl's stdout, and the pipe would never close.
  const log = ['-l', path.join(dir, 'server.log')];
  const ctl = async (...args: string[]): Promise<void> => {
    await execFileAsync(SCRIPT, ['ctl', dir, ...args]);
  };
  return {
    url,
    stop: () => ctl('stop', '-m', 'fast'),
    start: () => ctl('start', '-w', ...log, '-o', options),
    remove: async () => {
      await execFileAsync(SCRIPT, ['stop', dir]);
    },
  };
}
