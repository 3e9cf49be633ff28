import path from 'node:path';
import type { Sizes } from './options.js';
import { AGENT_BIN, BENCH_DIST, cpuOf, cpuSeconds, spawnNode, threadCpuSeconds, type Proc } from './proc.js';
import { sshMissing, startSshForward, type SshForward } from './ssh-forward.js';
import { median } from './stats.js';
import { tcpConnections, tcpDownload, tcpEcho, tcpUpload, type Deadline } from './tcp-clients.js';
import type { BenchSystem } from './system.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** The three ways to the TCP service: straight to it, through `svc tcp`, through `ssh -L`. */
export type TcpSide = 'direct' | 'tunnel' | 'ssh';

/** One figure on each side: medians over the rounds, and the medians of the per-round ratios. */
export interface TcpFigure {
  direct: number;
  tunnel: number;
  /** Null when OpenSSH is not installed. */
  ssh: number | null;
  /** tunnel ÷ direct. */
  ratio: number;
  /** tunnel ÷ ssh. */
  sshRatio: number | null;
}

export interface TcpResult {
  bytes: number;
  /** The host `svc tcp` and `ssh -L` forward to (--tcp-local-host); absent in results from before it: 127.0.0.1. */
  localHost?: string;
  rounds: number;
  /** The cipher ssh used, or why ssh did not run. */
  ssh: { cipher: string } | { skipped: string };
  download: TcpFigure;
  upload: TcpFigure;
  /** CPU seconds per GiB of the relays: edge + agent for the tunnel, ssh + sshd for ssh. */
  downloadCpuSPerGiB: { tunnel: number; ssh: number | null };
  uploadCpuSPerGiB: { tunnel: number; ssh: number | null };
  /** `warmup`: connections per side before the rounds, unrecorded (absent in results from before it). */
  connections: { count: number; concurrency: number; warmup?: number; perS: TcpFigure };
  /** CPU microseconds per connection of the relays (as for the transfers); steadier than the rate on a shared machine. */
  connectionsCpuUs?: { tunnel: number; ssh: number | null };
  echo: { trips: number; medianMs: TcpFigure; p99Ms: TcpFigure };
}

/** How long one run may take: a minute, plus its work at a rate far below any real side's. */
export function tcpDeadlineMs(kind: 'transfer' | 'connections' | 'echo', amount: number, overrideS?: number): number {
  if (overrideS !== undefined) return overrideS * 1000;
  const slack = 60_000;
  if (kind === 'transfer') return slack + (amount / (8 * MIB)) * 1000; // 8 MiB/s
  return slack + amount * 10; // 100 connections or round trips per second
}

/** Starts `svc tcp <localHost>:<port>` against the system's edge; resolves with the agent and its public port. */
export async function startTcpAgent(
  system: BenchSystem,
  localPort: number,
  nodeArgs: string[] = [],
  localHost = '127.0.0.1',
): Promise<{ agent: Proc; port: number }> {
  const agent = spawnNode(AGENT_BIN, ['tcp', `${localHost}:${localPort}`], {
    label: 'agent-tcp',
    nodeArgs,
    env: { SVC_SERVER: system.serverUrl, SVC_TOKEN: system.token },
  });
  const port = Number((await agent.waitForLine(/^Forwarding tcp:\/\/[^:\s]+:(\d+) -> /))[1]);
  // One line per closed connection: the connections row would otherwise parse thousands.
  agent.drainStdout();
  return { agent, port };
}

/** Starts the TCP rows' local service (tcp-origin-main.ts). */
export async function startTcpOriginProcess(): Promise<{ proc: Proc; port: number }> {
  const proc = spawnNode(path.join(BENCH_DIST, 'tcp-origin-main.js'), [], { label: 'tcp-origin' });
  return { proc, port: Number((await proc.waitForLine(/^tcp origin listening on (\d+)$/))[1]) };
}

/**
 * The TCP rows: the same local service reached directly, through `svc tcp` on this run's edge
 * and through `ssh -L` via a throwaway sshd, in rounds whose order rotates (direct, tunnel,
 * ssh; then tunnel, ssh, direct; …) so drift on the machine favours no side. Each run has a
 * deadline (tcpDeadlineMs) and a stalled one fails the benchmark naming itself.
 */
export async function tcpTunnels(
  system: BenchSystem,
  sizes: Sizes,
  log: (line: string) => void,
  deadlineS?: number,
  localHost = '127.0.0.1',
): Promise<TcpResult> {
  const origin = await startTcpOriginProcess();
  const stops: Array<() => Promise<void>> = [() => origin.proc.stop('SIGTERM')];
  try {
    const { agent, port: tunnelPort } = await startTcpAgent(system, origin.port, [], localHost);
    stops.push(() => agent.stop('SIGINT'));
    const skipped = sshMissing();
    let ssh: SshForward | undefined;
    if (skipped) log(`  ssh comparison skipped: ${skipped}`);
    else {
      ssh = await startSshForward(origin.port, localHost);
      stops.push(() => ssh!.close());
    }
    log(`  tcp service ${localHost}:${origin.port}, svc tcp :${tunnelPort}${ssh ? `, ssh -L :${ssh.port} (${ssh.cipher})` : ''}`);
    const sides: TcpSide[] = ssh ? ['direct', 'tunnel', 'ssh'] : ['direct', 'tunnel'];
    const portOf = (side: TcpSide): number => (side === 'direct' ? origin.port : side === 'tunnel' ? tunnelPort : ssh!.port);
    const relayCpu = (side: TcpSide): number =>
      side === 'tunnel' ? cpuOf([system.server.pid, agent.pid]) : side === 'ssh' ? ssh!.cpuSeconds() : 0;
    const label = (what: string, side: TcpSide): string =>
      `TCP ${what} ${side === 'direct' ? 'direct' : side === 'tunnel' ? 'through svc tcp' : 'through ssh -L'}`;

    const bytes = sizes.tcpBytes;
    const warmBytes = Math.min(bytes, sizes.tcpWarmupBytes);
    const transferDeadline = (what: string, side: TcpSide, n: number): Deadline => ({
      label: label(what, side),
      ms: tcpDeadlineMs('transfer', n, deadlineS),
    });
    if (warmBytes > 0) {
      for (const side of sides) {
        await tcpDownload(portOf(side), warmBytes, transferDeadline('download warm-up', side, warmBytes));
        await tcpUpload(portOf(side), warmBytes, transferDeadline('upload warm-up', side, warmBytes));
      }
      log(`  warm-up: ${(warmBytes / MIB).toFixed(0)} MiB each way per side`);
    }

    const transfer = async (
      direction: 'download' | 'upload',
    ): Promise<{ figure: TcpFigure; cpu: { tunnel: number; ssh: number | null } }> => {
      const move = direction === 'download' ? tcpDownload : tcpUpload;
      const rounds = await rotatingRounds(sizes.tcpRounds, sides, async (side) => {
        const cpu0 = relayCpu(side);
        const seconds = await move(portOf(side), bytes, transferDeadline(direction, side, bytes));
        const cpuS = relayCpu(side) - cpu0;
        const mibPerS = bytes / MIB / seconds;
        log(`  ${direction} ${side.padEnd(6)} ${mibPerS.toFixed(0)} MiB/s${side === 'direct' ? '' : `  relay CPU ${cpuS.toFixed(2)} s`}`);
        return { mibPerS, cpuSPerGiB: cpuS / (bytes / GIB) };
      });
      return {
        figure: figure(rounds, (r) => r.mibPerS),
        cpu: {
          tunnel: median(rounds.map((r) => r.tunnel!.cpuSPerGiB)),
          ssh: ssh ? median(rounds.map((r) => r.ssh!.cpuSPerGiB)) : null,
        },
      };
    };
    const download = await transfer('download');
    const upload = await transfer('upload');

    const { tcpConnectionCount: count, tcpConcurrency: concurrency, tcpConnectionWarmup: warmConnections } = sizes;
    if (warmConnections > 0) {
      // The transfers ran only a couple of connections through the accept, open and close paths:
      // without these, the measured runs would pay for compiling them (JIT) on the Node sides.
      for (const side of sides) {
        await tcpConnections(portOf(side), warmConnections, concurrency, {
          label: label('connections warm-up', side),
          ms: tcpDeadlineMs('connections', warmConnections, deadlineS),
        });
      }
      log(`  warm-up: ${warmConnections} connections per side`);
    }
    // Through the tunnel, where the CPU went: each process, and of it its main thread (the rest:
    // garbage collection helpers, compilers, the inspector's writer thread, the DNS pool).
    const pids = [system.server.pid, agent.pid];
    const split = (): number[] => pids.flatMap((pid) => [cpuSeconds(pid), threadCpuSeconds(pid, pid)]);
    const connectionRounds = await rotatingRounds(sizes.tcpRounds, sides, async (side) => {
      const cpu0 = relayCpu(side);
      const split0 = side === 'tunnel' ? split() : [];
      const perS = await tcpConnections(portOf(side), count, concurrency, {
        label: label('connections', side),
        ms: tcpDeadlineMs('connections', count, deadlineS),
      });
      const cpuUs = ((relayCpu(side) - cpu0) / count) * 1e6;
      let where = '';
      if (side === 'tunnel') {
        const [edge, edgeMain, agentAll, agentMain] = split().map((s, i) => (((s - split0[i]!) / count) * 1e6).toFixed(0));
        where = ` (edge ${edge}, main thread ${edgeMain}; agent ${agentAll}, main thread ${agentMain})`;
      }
      log(
        `  connections ${side.padEnd(6)} ${perS.toFixed(0)}/s${side === 'direct' ? '' : `  relay CPU ${cpuUs.toFixed(0)} µs each${where}`}`,
      );
      return { perS, cpuUs };
    });

    const trips = sizes.tcpEchoTrips;
    const echoRounds = await rotatingRounds(sizes.tcpRounds, sides, async (side) => {
      const run = await tcpEcho(portOf(side), trips, Math.ceil(trips / 10), {
        label: label('echo', side),
        ms: tcpDeadlineMs('echo', trips * 1.1, deadlineS),
      });
      log(`  echo ${side.padEnd(6)} median ${(run.median * 1000).toFixed(0)} µs  p99 ${(run.p99 * 1000).toFixed(0)} µs`);
      return run;
    });

    return {
      bytes,
      localHost,
      rounds: sizes.tcpRounds,
      ssh: ssh ? { cipher: ssh.cipher } : { skipped: skipped! },
      download: download.figure,
      upload: upload.figure,
      downloadCpuSPerGiB: download.cpu,
      uploadCpuSPerGiB: upload.cpu,
      connections: { count, concurrency, warmup: warmConnections, perS: figure(connectionRounds, (r) => r.perS) },
      connectionsCpuUs: {
        tunnel: median(connectionRounds.map((r) => r.tunnel!.cpuUs)),
        ssh: ssh ? median(connectionRounds.map((r) => r.ssh!.cpuUs)) : null,
      },
      echo: { trips, medianMs: figure(echoRounds, (r) => r.median), p99Ms: figure(echoRounds, (r) => r.p99) },
    };
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

/** One round: a run per side. */
type Round<T> = Partial<Record<TcpSide, T>>;

/** `rounds` rounds of a run per side, the order rotating by one each round. */
export async function rotatingRounds<T>(
  rounds: number,
  sides: readonly TcpSide[],
  run: (side: TcpSide) => Promise<T>,
): Promise<Array<Round<T>>> {
  const out: Array<Round<T>> = [];
  for (let round = 0; round < rounds; round++) {
    const result: Round<T> = {};
    for (let i = 0; i < sides.length; i++) {
      const side = sides[(round + i) % sides.length]!;
      result[side] = await run(side);
    }
    out.push(result);
  }
  return out;
}

/** Medians per side and of the per-round ratios tunnel ÷ direct and tunnel ÷ ssh. */
export function figure<T>(rounds: ReadonlyArray<Round<T>>, field: (value: T) => number): TcpFigure {
  const of = (side: TcpSide): number[] => rounds.map((r) => field(r[side]!));
  const hasSsh = rounds.every((r) => r.ssh !== undefined);
  return {
    direct: median(of('direct')),
    tunnel: median(of('tunnel')),
    ssh: hasSsh ? median(of('ssh')) : null,
    ratio: median(rounds.map((r) => field(r.tunnel!) / field(r.direct!))),
    sshRatio: hasSsh ? median(rounds.map((r) => field(r.tunnel!) / field(r.ssh!))) : null,
  };
}
