import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

/** How long a helper process may take to say it is ready; a bound for hangs, not a timing assertion. */
const READY_TIMEOUT_MS = 20_000;
/** Grace between SIGTERM and SIGKILL when stopping. */
const STOP_GRACE_MS = 5_000;

const live = new Set<ChildProcess>();
// Safety net: a test file that crashes must not leave DNS servers or CAs behind.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A helper process started by a test. */
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
  live.add(child);
  let output = '';
  const exited = once(child, 'exit').finally(() => live.delete(child));
  const running: RunningProcess = {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited.catch(() => undefined);
      clearTimeout(timer);
    },
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${command} not ready after ${READY_TIMEOUT_MS} ms:\n${output}`)), READY_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
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
 * Polls `check` until it returns true: only for conditions that emit no event
 * (a port starting to answer). Bounded: throws after `attempts` tries.
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
