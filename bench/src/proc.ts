import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root, from this file's location (bench/dist). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Built entry points: the benchmark runs what users run. `npm run bench` builds first. */
export const SERVER_BIN = path.join(REPO_ROOT, 'packages/server/dist/main.js');
export const AGENT_BIN = path.join(REPO_ROOT, 'packages/agent/dist/main.js');
/** This package's own compiled scripts (origin, probes). */
export const BENCH_DIST = path.dirname(fileURLToPath(import.meta.url));

/** Lines kept per process: agents print one line per request, so the history must stay bounded. */
const KEPT_LINES = 200;

/** How long a stopping child gets before SIGKILL. */
const STOP_GRACE_MS = 10_000;

/** Every child this run started, so an abort can stop exactly those (by pid). */
const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** A child process whose output is read line by line; only the last lines are kept. */
export class Proc {
  readonly recent: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: Array<{ pattern: RegExp; resolve: (m: RegExpMatchArray) => void; reject: (e: Error) => void }> = [];

  constructor(
    readonly child: ChildProcess,
    readonly label: string,
  ) {
    started.add(child);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        started.delete(child);
        for (const waiter of this.waiters) waiter.reject(new Error(`${label} exited (${code ?? signal}) before printing ${waiter.pattern}:\n${this.recent.join('\n')}`));
        this.waiters = [];
        resolve({ code, signal });
      });
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const parts = (partial + chunk).split('\n');
        partial = parts.pop() ?? '';
        for (const line of parts) this.onLine(line);
      });
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resolves with the first future or kept line matching `pattern`; rejects if the process exits first. */
  waitForLine(pattern: RegExp): Promise<RegExpMatchArray> {
    for (const line of this.recent) {
      const match = line.match(pattern);
      if (match) return Promise.resolve(match);
    }
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      return Promise.reject(new Error(`${this.label} already exited:\n${this.recent.join('\n')}`));
    }
    return new Promise((resolve, reject) => this.waiters.push({ pattern, resolve, reject }));
  }

  /** Sends a signal and waits for the exit; SIGKILL after STOP_GRACE_MS if it hangs. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill(signal);
    const force = setTimeout(() => this.child.kill('SIGKILL'), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(force);
  }

  /**
   * Stops reading stdout line by line and just drains it. The agent prints a line per request;
   * parsing thousands of lines a second here would take CPU from the processes being measured.
   */
  drainStdout(): void {
    const stdout = this.child.stdout;
    if (!stdout || process.env.SVC_BENCH_VERBOSE) return;
    stdout.removeAllListeners('data');
    stdout.resume();
  }

  private onLine(line: string): void {
    this.recent.push(line);
    if (this.recent.length > KEPT_LINES) this.recent.splice(0, this.recent.length - KEPT_LINES);
    if (process.env.SVC_BENCH_VERBOSE) process.stderr.write(`[${this.label}] ${line}\n`);
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const waiter of this.waiters) {
      const match = line.match(waiter.pattern);
      if (match) waiter.resolve(match);
      else still.push(waiter);
    }
    this.waiters = still;
  }
}

/** Spawns `node [nodeArgs] <script> ...args` with the caller's environment minus SVC_*, plus `env`; with an IPC channel on request. */
export function spawnNode(
  script: string,
  args: string[],
  options: { env?: Record<string, string | undefined>; nodeArgs?: string[]; ipc?: boolean; label: string },
): Proc {
  const base: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('SVC_')) base[key] = value;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script, ...args], {
    env: { ...base, ...options.env },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  return new Proc(child, options.label);
}

/** A fresh temporary directory and its removal. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Clock ticks per second of /proc/<pid>/stat times; 100 on every Linux we run on (getconf CLK_TCK). */
const CLK_TCK = 100;

/** CPU seconds a process has used so far, from /proc/<pid>/stat: in user space and in the kernel. */
export function cpuTimes(pid: number): { userS: number; systemS: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces and parentheses: split after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  return { userS: Number(fields[11]) / CLK_TCK, systemS: Number(fields[12]) / CLK_TCK };
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const { userS, systemS } = cpuTimes(pid);
  return userS + systemS;
}

/** Sum of CPU seconds of several processes. */
export function cpuOf(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
}

/** Resident set size of a process in bytes, from /proc/<pid>/status. */
export function vmRssBytes(pid: number): number {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)\s+kB/m);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}
