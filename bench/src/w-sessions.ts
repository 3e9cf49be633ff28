import { readdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { MemorySample } from './ipc.js';
import { ipcClient } from './ipc.js';
import { BENCH_DIST, cpuSeconds, spawnNode, vmRssBytes, type Proc } from './proc.js';
import { startSystem, type BenchSystem } from './system.js';

/** Sessions one helper process opens at most: keeps each helper's own event loop responsive. */
const SESSIONS_PER_PROBE = 2500;

export type SessionTransport = 'tcp' | 'tls';

/** CPU over one measured window: the edge's, and the helpers' (the agents' side). */
export interface WindowCpu {
  seconds: number;
  /** Edge CPU as a percentage of one core, and per session-second in µs. */
  edgePercent: number;
  edgeUsPerSessionS: number;
  agentPercent: number;
  agentUsPerSessionS: number;
}

export interface SessionsPhase {
  transport: SessionTransport;
  sessions: number;
  probes: number;
  /** Wall time to open and bind every session, seconds. */
  bindAllS: number;
  /** Per session, after a forced GC on both sides: JS heap (+ external), resident set, file descriptors. */
  edgeHeapBytes: number;
  edgeRssBytes: number;
  edgeFds: number;
  agentHeapBytes: number;
  agentRssBytes: number;
  idle: WindowCpu;
  /** With --cpu-prof: the edge's CPU profile of the idle window. */
  idleProfile?: string;
  /** The same window with every session carrying one request a minute. */
  active: WindowCpu & { requests: number; ok: number };
}

export interface SessionsResult {
  phases: SessionsPhase[];
}

interface Probe {
  proc: Proc;
  call: (cmd: string, args?: Record<string, unknown>) => Promise<unknown>;
}

const heapOf = (sample: MemorySample): number => sample.heapUsed + sample.external;
const fdsOf = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

function startProbe(system: BenchSystem, index: number): Probe {
  const proc = spawnNode(
    path.join(BENCH_DIST, 'session-probe.js'),
    [
      system.serverUrl,
      `https://localhost:${system.httpsPort}`,
      system.devCaFile,
      system.token,
      `127.0.0.1:${system.originPort}`,
      String(system.httpPort),
    ],
    { label: `session-probe-${index}`, ipc: true, nodeArgs: ['--expose-gc'] },
  );
  return { proc, call: ipcClient(proc.child) };
}

/** Edge and helper CPU over `run`, which lasts about `seconds`. */
async function measureWindow(system: BenchSystem, probes: Probe[], sessions: number, run: () => Promise<unknown>): Promise<WindowCpu> {
  const agentCpu = async (): Promise<number> =>
    (await Promise.all(probes.map((p) => p.call('cpu') as Promise<number>))).reduce((a, b) => a + b, 0);
  const edge0 = cpuSeconds(system.server.pid);
  const agent0 = await agentCpu();
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  const edgeS = cpuSeconds(system.server.pid) - edge0;
  const agentS = (await agentCpu()) - agent0;
  return {
    seconds,
    edgePercent: (edgeS / seconds) * 100,
    edgeUsPerSessionS: (edgeS * 1e6) / (sessions * seconds),
    agentPercent: (agentS / seconds) * 100,
    agentUsPerSessionS: (agentS * 1e6) / (sessions * seconds),
  };
}

/**
 * One transport: a fresh edge, `sessions` quiet agents from a few helper processes, then the
 * edge's memory per session after a GC, its CPU over an idle window, and the same with one
 * request a minute per session. Memory is the difference against the edge before any helper.
 */
async function phase(
  transport: SessionTransport,
  sessions: number,
  idleS: number,
  log: (line: string) => void,
  profileDir: string | undefined,
  heartbeatMs: number | undefined,
): Promise<SessionsPhase> {
  const system = await startSystem(heartbeatMs === undefined ? {} : { serverEnv: { SVC_HEARTBEAT_MS: String(heartbeatMs) } });
  const probes: Probe[] = [];
  try {
    const edge0 = await system.edgeMemory();
    const rss0 = vmRssBytes(system.server.pid);
    const fds0 = fdsOf(system.server.pid);
    const count = Math.ceil(sessions / SESSIONS_PER_PROBE);
    for (let i = 0; i < count; i++) probes.push(startProbe(system, i));
    const probeMem0 = await Promise.all(probes.map((p) => p.call('mem') as Promise<MemorySample>));
    const probeRss0 = probes.map((p) => vmRssBytes(p.proc.pid));

    const started = performance.now();
    await Promise.all(
      probes.map((p, i) =>
        p.call('open', { count: Math.floor(sessions / count) + (i < sessions % count ? 1 : 0), tls: transport === 'tls' }),
      ),
    );
    const bindAllS = (performance.now() - started) / 1000;
    log(`  ${transport}: ${sessions} sessions bound in ${bindAllS.toFixed(1)} s by ${count} helper processes`);

    const edge1 = await system.edgeMemory();
    const rss1 = vmRssBytes(system.server.pid);
    const fds1 = fdsOf(system.server.pid);
    const probeMem1 = await Promise.all(probes.map((p) => p.call('mem') as Promise<MemorySample>));
    const probeRss1 = probes.map((p) => vmRssBytes(p.proc.pid));
    const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

    const idleProfile = profileDir === undefined ? undefined : path.join(profileDir, `edge-idle-${transport}.cpuprofile`);
    if (idleProfile) {
      await mkdir(profileDir!, { recursive: true });
      await system.edgeProbe('profileStart');
    }
    const idle = await measureWindow(system, probes, sessions, () => new Promise((resolve) => setTimeout(resolve, idleS * 1000)));
    if (idleProfile) await system.edgeProbe('profileStop', { file: idleProfile });
    log(`  ${transport}: idle ${idle.seconds.toFixed(0)} s, edge ${idle.edgePercent.toFixed(2)}% of a core`);
    let requests = 0;
    let ok = 0;
    const active = await measureWindow(system, probes, sessions, async () => {
      const answers = (await Promise.all(probes.map((p) => p.call('visit', { seconds: idleS, perMinute: 1 })))) as {
        sent: number;
        ok: number;
      }[];
      requests = sum(answers.map((a) => a.sent));
      ok = sum(answers.map((a) => a.ok));
    });
    log(
      `  ${transport}: one request a minute each (${requests} requests, ${ok} answered 200), edge ${active.edgePercent.toFixed(2)}% of a core`,
    );
    return {
      transport,
      sessions,
      probes: count,
      bindAllS,
      edgeHeapBytes: (heapOf(edge1) - heapOf(edge0)) / sessions,
      edgeRssBytes: (rss1 - rss0) / sessions,
      edgeFds: (fds1 - fds0) / sessions,
      agentHeapBytes: (sum(probeMem1.map(heapOf)) - sum(probeMem0.map(heapOf))) / sessions,
      agentRssBytes: (sum(probeRss1) - sum(probeRss0)) / sessions,
      idle,
      idleProfile,
      active: { ...active, requests, ok },
    };
  } finally {
    for (const probe of probes) {
      await probe.call('close').catch(() => undefined);
      await probe.proc.stop('SIGTERM');
    }
    await system.close();
  }
}

/** `--sessions N`: N quiet agent sessions over plain TCP, then over TLS, each against a fresh edge. */
export async function manySessions(
  sessions: number,
  idleS: number,
  log: (line: string) => void,
  profileDir?: string,
  heartbeatMs?: number,
): Promise<SessionsResult> {
  const phases: SessionsPhase[] = [];
  for (const transport of ['tcp', 'tls'] as const) phases.push(await phase(transport, sessions, idleS, log, profileDir, heartbeatMs));
  return { phases };
}

const kib = (bytes: number): string => (bytes / 1024).toFixed(1);
const us = (value: number): string => value.toFixed(2);

/** The markdown report of --sessions. */
export function sessionsMarkdown(result: SessionsResult, command: string): string {
  const lines = [
    '| transport | sessions | bind all, s | edge heap / session, KiB | edge RSS / session, KiB | edge fds / session | edge CPU idle, % of a core | edge µs / session-s idle | agent µs / session-s idle | edge CPU, 1 req/min each, % | edge µs / session-s, 1 req/min | agent heap / session, KiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const p of result.phases) {
    lines.push(
      `| ${p.transport} | ${p.sessions} | ${p.bindAllS.toFixed(1)} | ${kib(p.edgeHeapBytes)} | ${kib(p.edgeRssBytes)} | ${p.edgeFds.toFixed(2)} | ${p.idle.edgePercent.toFixed(2)} | ${us(p.idle.edgeUsPerSessionS)} | ${us(p.idle.agentUsPerSessionS)} | ${p.active.edgePercent.toFixed(2)} | ${us(p.active.edgeUsPerSessionS)} | ${kib(p.agentHeapBytes)} |`,
    );
  }
  const windows = result.phases.map(
    (p) =>
      `${p.transport}: idle ${p.idle.seconds.toFixed(0)} s, active ${p.active.seconds.toFixed(0)} s with ${p.active.requests} requests (${p.active.ok} answered 200)`,
  );
  return `${lines.join('\n')}\n\n${windows.join('; ')}\n\nCommand: \`${command}\``;
}
