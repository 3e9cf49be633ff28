import { readdirSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { vmRssBytes } from '../proc.js';

// Helpers of the reliability measurements (bench/src/reliability/*.ts): each script starts the
// real processes, measures one fault or load case and prints its figures; nothing is asserted.

export const MIB = 1024 * 1024;

/** Open file descriptors (sockets included) of a process. */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** VmRSS of a process in MiB, one decimal. */
export function rssMiB(pid: number): string {
  return (vmRssBytes(pid) / MIB).toFixed(1);
}

/** The machine, for the record of a run: CPUs, memory and load average at the start. */
export function conditions(): string {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  return `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, load average ${load}, Node ${process.version}`;
}

/** One GET through the edge on its HTTP port; resolves with the status (0 on a socket error) and the time taken. */
export function timedGet(port: number, host: string, path = '/small', timeoutMs = 10_000): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port, path, headers: { host: `${host}:${port}` }, agent: false, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
  });
}

/**
 * Checks the command line of a reliability script before it starts anything: `--help` prints
 * the usage and exits 0; an argument that is not `--name=<number>` with a known name prints
 * what is wrong and the usage, and exits 2 (never a stack trace).
 */
export function checkArgs(usage: string, names: readonly string[]): void {
  const fail = (message: string): never => {
    process.stderr.write(`${message}\n${usage}\n`);
    process.exit(2);
  };
  for (const arg of process.argv.slice(2)) {
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${usage}\n`);
      process.exit(0);
    }
    const match = /^--([A-Za-z]+)=(.*)$/.exec(arg);
    if (!match) fail(`unknown argument ${arg}`);
    const [, name, value] = match!;
    if (!names.includes(name!)) fail(`unknown option --${name}`);
    if (value === '' || !Number.isFinite(Number(value))) fail(`--${name} must be a number, not "${value}"`);
  }
}

/** Reads `--name=value` flags of the command line, with defaults (checked first by checkArgs). */
export function flag(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = arg === undefined ? fallback : Number(arg.slice(name.length + 3));
  if (!Number.isFinite(value)) throw new Error(`--${name} must be a number`);
  return value;
}
