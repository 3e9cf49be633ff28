import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root, from this file's location (test/e2e/harness). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** Built entry points: e2e tests run what users run. `npm test` builds first. */
export const SERVER_BIN = path.join(REPO_ROOT, 'packages/server/dist/main.js');
export const AGENT_BIN = path.join(REPO_ROOT, 'packages/agent/dist/main.js');

/** A child process whose output is collected line by line and can be waited on. */
export class Proc {
  readonly lines: string[] = [];
  readonly stderrLines: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: Array<{ pattern: RegExp; resolve: (m: RegExpMatchArray) => void }> = [];

  constructor(readonly child: ChildProcess, readonly label: string) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        resolve({ code, signal });
        for (const waiter of this.waiters) waiter.resolve(Object.assign([] as unknown as RegExpMatchArray, { exited: true }));
        this.waiters = [];
      });
    });
    this.collect(child.stdout, this.lines);
    this.collect(child.stderr, this.stderrLines);
  }

  /** All output so far (stdout then stderr). */
  get output(): string {
    return [...this.lines, ...this.stderrLines].join('\n');
  }

  /**
   * Resolves with the first line (stdout or stderr, past or future) matching `pattern`;
   * rejects if the process exits first. The test runner's timeout bounds the wait.
   */
  waitForLine(pattern: RegExp): Promise<RegExpMatchArray> {
    for (const line of [...this.lines, ...this.stderrLines]) {
      const match = line.match(pattern);
      if (match) return Promise.resolve(match);
    }
    return new Promise((resolve, reject) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        reject(new Error(`${this.label} exited before printing ${pattern}:\n${this.output}`));
        return;
      }
      this.waiters.push({
        pattern,
        resolve: (match) => {
          if ((match as unknown as { exited?: boolean }).exited) {
            reject(new Error(`${this.label} exited before printing ${pattern}:\n${this.output}`));
          } else resolve(match);
        },
      });
    });
  }

  /** Sends a signal and waits for the exit. */
  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }

  private collect(stream: NodeJS.ReadableStream | null, into: string[]): void {
    if (!stream) return;
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) this.onLine(line, into);
    });
    stream.on('end', () => {
      if (partial) this.onLine(partial, into);
    });
  }

  private onLine(line: string, into: string[]): void {
    into.push(line);
    if (process.env.SVC_E2E_VERBOSE) process.stderr.write(`[${this.label}] ${line}\n`);
    const still: typeof this.waiters = [];
    for (const waiter of this.waiters) {
      const match = line.match(waiter.pattern);
      if (match) waiter.resolve(match);
      else still.push(waiter);
    }
    this.waiters = still;
  }
}

/** Spawns `node <script> ...args` with a clean SVC_* environment plus `env`. */
export function spawnNode(script: string, args: string[], env: Record<string, string | undefined>, label: string): Proc {
  const base: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('SVC_')) base[key] = value;
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Proc(child, label);
}

/** A fresh temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Waits for an event with the test runner's timeout as the bound. */
export { once };

/**
 * Splits what the agent printed for a failure: its sentence, then one `hint:` line. Fails the
 * test when the hint is missing, since every failure must say what to do about it.
 */
export function splitFailure(stderr: string): { sentence: string; hint: string } {
  const lines = stderr.trimEnd().split('\n');
  const hint = lines.pop() ?? '';
  if (!hint.startsWith('hint: ') || hint.length < 12) throw new Error(`no hint after the failure:\n${stderr}`);
  return { sentence: lines.join('\n'), hint: hint.slice('hint: '.length) };
}
