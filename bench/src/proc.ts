import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Proc, spawnNode as spawnNodeProcess, tempDir, type SpawnNodeOptions } from '@svcrouter/testkit';
import { fileURLToPath } from 'node:url';

/** Repository root, from this file's location (bench/dist). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Built entry points: the benchmark runs what users run. `npm run bench` builds first. */
export const SERVER_BIN = path.join(REPO_ROOT, 'packages/server/dist/main.js');
export const AGENT_BIN = path.join(REPO_ROOT, 'packages/agent/dist/main.js');
/** This package's own compiled scripts (origin, probes). */
export const BENCH_DIST = path.dirname(fileURLToPath(import.meta.url));

export { Proc, tempDir };

/** Lines kept per process: agents print one line per request, so the history must stay bounded. */
const KEPT_LINES = 200;

/** Spawns `node [nodeArgs] <script> ...args` with the caller's environment minus SVC_*, plus `env`; SVC_BENCH_VERBOSE echoes its lines. */
export function spawnNode(script: string, args: string[], options: Omit<SpawnNodeOptions, 'keptLines' | 'echo'>): Proc {
  return spawnNodeProcess(script, args, { ...options, keptLines: KEPT_LINES, echo: Boolean(process.env.SVC_BENCH_VERBOSE) });
}

/** Clock ticks per second of /proc/<pid>/stat times; 100 on every Linux we run on (getconf CLK_TCK). */
const CLK_TCK = 100;

/** CPU seconds a process has used so far, from /proc/<pid>/stat: in user space and in the kernel. */
export function cpuTimes(pid: number): { userS: number; systemS: number } {
  return statTimes(`/proc/${pid}/stat`);
}

/** CPU seconds (user + system) a process has used so far. One parameter, so `pids.map(cpuSeconds)` stays right. */
export function cpuSeconds(pid: number): number {
  const { userS, systemS } = cpuTimes(pid);
  return userS + systemS;
}

/** CPU seconds (user + system) one thread of a process has used so far (a process's main thread has its pid). */
export function threadCpuSeconds(pid: number, thread: number): number {
  const { userS, systemS } = statTimes(`/proc/${pid}/task/${thread}/stat`);
  return userS + systemS;
}

function statTimes(file: string): { userS: number; systemS: number } {
  const stat = readFileSync(file, 'utf8');
  // The command name (field 2) may contain spaces and parentheses: split after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  return { userS: Number(fields[11]) / CLK_TCK, systemS: Number(fields[12]) / CLK_TCK };
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
