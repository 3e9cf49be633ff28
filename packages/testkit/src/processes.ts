import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

// Child processes for the tests (unit and whole-system) and the benchmark: one helper, so a
// fix to how a process is started, read, awaited or stopped reaches all three.

/** Grace between the stop signal and SIGKILL. */
const STOP_GRACE_MS = 10_000;
/** How long startProcess waits for the ready output; a bound for hangs, not a timing assertion. */
const READY_TIMEOUT_MS = 20_000;
/**
 * How long waitForLine waits by default: a bound for hangs, under the e2e files' own timeout, so
 * a line that never comes fails with what the process did print instead of a bare file timeout.
 */
const LINE_TIMEOUT_MS = 120_000;

/** The process's exit. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How a Proc reads its child. */
export interface ProcOptions {
  /** Lines kept per stream; default all. The benchmark bounds it: an agent prints a line per request. */
  keptLines?: number;
  /** Also copy each line to this process's stderr, prefixed with the label. */
  echo?: boolean;
}

const live = new Set<ChildProcess>();
// Safety net: a run that crashes must not leave servers, agents, DNS servers or CAs behind.
process.once('exit', () => {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** A child process whose output is read line by line and can be waited on. */
export class Proc {
  readonly lines: string[] = [];
  readonly stderrLines: string[] = [];
  readonly exited: Promise<Exit>;
  private waiters: Array<{ pattern: RegExp; resolve: (m: RegExpMatchArray) => void; reject: (e: Error) => void }> = [];

  constructor(
    readonly child: ChildProcess,
    readonly label: string,
    private readonly options: ProcOptions = {},
  ) {
    live.add(child);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        live.delete(child);
        for (const waiter of this.waiters) {
          waiter.reject(new Error(`${label} exited (${code ?? signal}) before printing ${waiter.pattern}:\n${this.output}`));
        }
        this.waiters = [];
        resolve({ code, signal });
      });
    });
    this.collect(child.stdout, this.lines);
    this.collect(child.stderr, this.stderrLines);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** The kept output: stdout lines, then stderr lines. */
  get output(): string {
    return [...this.lines, ...this.stderrLines].join('\n');
  }

  /**
   * Resolves with the first kept or future line (stdout or stderr) matching `pattern`; rejects
   * if the process exits first, or after `timeoutMs` with the output so far.
   */
  waitForLine(pattern: RegExp, timeoutMs = LINE_TIMEOUT_MS): Promise<RegExpMatchArray> {
    for (const line of [...this.lines, ...this.stderrLines]) {
      const match = line.match(pattern);
      if (match) return Promise.resolve(match);
    }
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      return Promise.reject(new Error(`${this.label} exited before printing ${pattern}:\n${this.output}`));
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        pattern,
        resolve: (match: RegExpMatchArray) => {
          clearTimeout(timer);
          resolve(match);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((each) => each !== waiter);
        reject(new Error(`${this.label} printed no line matching ${pattern} in ${timeoutMs} ms:\n${this.output}`));
      }, timeoutMs);
      timer.unref();
      this.waiters.push(waiter);
    });
  }

  /** Sends a signal and waits for the exit, however long it takes. */
  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<Exit> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }

  /** Sends a signal and waits for the exit; SIGKILL after `graceMs` if it hangs. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = STOP_GRACE_MS): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill(signal);
    const force = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(force);
  }

  /**
   * Stops reading stdout line by line and just drains it, so parsing a line per request does
   * not take CPU from the processes a benchmark measures. Kept while echoing.
   */
  drainStdout(): void {
    const stdout = this.child.stdout;
    if (!stdout || this.options.echo) return;
    stdout.removeAllListeners('data');
    stdout.resume();
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
    const kept = this.options.keptLines;
    if (kept !== undefined && into.length > kept) into.splice(0, into.length - kept);
    if (this.options.echo) process.stderr.write(`[${this.label}] ${line}\n`);
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

/** How spawnNode starts a script. */
export interface SpawnNodeOptions extends ProcOptions {
  label: string;
  /** Added to the caller's environment, from which every SVC_* variable is removed first. */
  env?: Record<string, string | undefined>;
  /** Node's own flags, before the script. */
  nodeArgs?: string[];
  /** Opens an IPC channel (process.send in the child). */
  ipc?: boolean;
}

/** Spawns `node [nodeArgs] <script> ...args` with the caller's environment minus SVC_*, plus `env`. */
export function spawnNode(script: string, args: readonly string[], options: SpawnNodeOptions): Proc {
  const base: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('SVC_')) base[key] = value;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script, ...args], {
    env: { ...base, ...options.env },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  return new Proc(child, options.label, options);
}

/** A helper process (a DNS server, a CA) started by a test. */
export interface RunningProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Spawns `command` and resolves once its output satisfies `ready`; rejects with the output if it exits first. */
export async function startProcess(
  command: string,
  args: readonly string[],
  ready: (output: string) => boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningProcess> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = new Proc(child, command);
  let output = '';
  const running: RunningProcess = { child, output: () => output, stop: () => proc.stop('SIGTERM', 5_000) };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${command} not ready after ${READY_TIMEOUT_MS} ms:\n${output}`)), READY_TIMEOUT_MS);
    const onData = (chunk: Buffer | string): void => {
      output += chunk.toString();
      if (ready(output)) done();
    };
    const onExit = (code: number | null): void => fail(new Error(`${command} exited (${code}) before it was ready:\n${output}`));
    const onError = (err: Error): void => fail(err);
    function cleanup(): void {
      clearTimeout(timer);
      child.off('exit', onExit);
      child.off('error', onError);
    }
    function done(): void {
      cleanup();
      resolve();
    }
    function fail(err: Error): void {
      cleanup();
      void running.stop();
      reject(err);
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
  return running;
}

/**
 * Polls `check` until it returns true: only for conditions that emit no event (a port
 * starting to answer). Bounded: throws after `attempts` tries.
 */
export async function pollUntil(what: string, check: () => Promise<boolean>, attempts = 250, intervalMs = 20): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await delay(intervalMs);
  }
  throw new Error(`${what}: not true after ${attempts} attempts`);
}

/** A loopback port free for both TCP and UDP at the time of the call (a DNS server needs both). */
export async function freePort(): Promise<number> {
  for (;;) {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const udp = createSocket('udp4');
    const udpFree = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, '127.0.0.1', () => resolve(true));
    });
    try {
      udp.close();
    } catch {
      // never bound
    }
    server.close();
    await once(server, 'close');
    if (udpFree) return port;
  }
}

/** A fresh temporary directory and its removal. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
