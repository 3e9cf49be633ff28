import { readFileSync } from 'node:fs';
import os from 'node:os';
import { cpuSeconds } from './proc.js';

/** CPU used during the run by this benchmark and by everything else on the machine. */
export interface LoadReport {
  wallS: number;
  /** Busy CPU-seconds of the whole machine (all cores), from /proc/stat. */
  machineBusyS: number;
  /** Busy CPU-seconds of the benchmark: this process, its reaped children (wrk, probes), and the live processes given. */
  benchS: number;
  /** The rest: other processes competing for the cores; large values make the figures unreliable. */
  foreignS: number;
  /** foreignS as a share of the machine's capacity over the run, percent. */
  foreignPercent: number;
}

/** Seconds of all cores since boot: busy (user + nice + system + irq + softirq + steal) and idle (idle + iowait). */
export function machineSeconds(): { busyS: number; idleS: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  return { busyS: (user + nice + system + irq + softirq + steal) / 100, idleS: (idle + iowait) / 100 };
}

function machineBusySeconds(): number {
  return machineSeconds().busyS;
}

/** CPU seconds of this process plus its children that have exited and been waited for. */
function selfAndReapedSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime are fields 14-17 (index 11-14 after the state field).
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
}

/**
 * Starts measuring. `livePids` returns the benchmark's long-lived children (origin, edge,
 * agent) at the moment of reading; call `stop()` before they exit, since an exited child's
 * time moves into this process's children total only once reaped.
 */
export function startLoadMeter(livePids: () => number[]): { stop(): LoadReport } {
  const ours = (): number => selfAndReapedSeconds() + livePids().reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const wall0 = performance.now();
  const machine0 = machineBusySeconds();
  const bench0 = ours();
  return {
    stop() {
      const wallS = (performance.now() - wall0) / 1000;
      const machineBusyS = machineBusySeconds() - machine0;
      const benchS = ours() - bench0;
      const foreignS = Math.max(0, machineBusyS - benchS);
      return { wallS, machineBusyS, benchS, foreignS, foreignPercent: (100 * foreignS) / (wallS * os.cpus().length) };
    },
  };
}
