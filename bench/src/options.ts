import path from 'node:path';
import { REPO_ROOT } from './proc.js';

/** How much work each workload does; one preset per mode. */
export interface Sizes {
  /** Matched pairs of the small-GET run, seconds per run, and a warm-up per side before them. */
  w1Rounds: number;
  w1DurationS: number;
  w1WarmupS: number;
  connections: number;
  /**
   * Pairs of the rule rows (a tunnel with a rule or a pool against one without, the order
   * alternating; an even number) and seconds per run. A rule's cost is a few microseconds
   * against a machine whose load moves a run's CPU per request by more than that within
   * seconds, so these rows take many short pairs, each pair's two runs close together in time,
   * and the median of the pairs' differences, where one long pair would be a draw.
   */
  ruleRounds: number;
  ruleDurationS: number;
  /**
   * Bytes of each download and upload, pairs per direction, and unrecorded warm-up transfers
   * per side before them (as W1 warms up: the first 100 MiB runs measure JIT compilation of
   * client, origin, edge and agent, at a third to a half of the steady rate, direct and tunnel).
   */
  transferBytes: number;
  transferRounds: number;
  transferWarmups: number;
  /** Server-sent events per stream, their spacing, and pairs. */
  sseEvents: number;
  sseIntervalMs: number;
  sseRounds: number;
  /** WebSocket round trips per run (after a warm-up of a tenth as many), and pairs. */
  wsTrips: number;
  wsRounds: number;
  /** Idle tunnels bound from one SDK process, and sequential binds timed for bind latency. */
  tunnels: number;
  bindSamples: number;
  /** --sessions: quiet agent sessions by default, and seconds of each measured window (idle, then one request a minute each). */
  sessions: number;
  sessionsWindowS: number;
  /**
   * TCP rows: bytes of each transfer (each way, per side), rounds of direct / svc tcp / ssh -L,
   * unrecorded warm-up bytes each way per side, short connections per run and how many at once
   * (after tcpConnectionWarmup unrecorded ones per side: enough for V8 to finish optimizing the
   * connection path, see docs/performance.md#tcp-tunnels), and 1-byte echo round trips per run
   * (after a tenth as many unrecorded).
   */
  tcpBytes: number;
  tcpRounds: number;
  tcpWarmupBytes: number;
  tcpConnectionCount: number;
  tcpConnectionWarmup: number;
  tcpConcurrency: number;
  tcpEchoTrips: number;
}

export type Mode = 'default' | 'quick' | 'smoke';

/** Default: under 5 minutes. Quick: under 1 minute. Smoke: seconds, to check the figures exist (CI). */
export const PRESETS: Record<Mode, Sizes> = {
  default: {
    w1Rounds: 3,
    w1DurationS: 10,
    w1WarmupS: 3,
    connections: 50,
    ruleRounds: 12,
    ruleDurationS: 2,
    transferBytes: 100 * 1024 * 1024,
    transferRounds: 3,
    transferWarmups: 2,
    sseEvents: 20,
    sseIntervalMs: 50,
    sseRounds: 3,
    wsTrips: 2000,
    wsRounds: 3,
    tunnels: 1000,
    bindSamples: 20,
    sessions: 10_000,
    sessionsWindowS: 30,
    tcpBytes: 1024 * 1024 * 1024,
    tcpRounds: 3,
    tcpWarmupBytes: 128 * 1024 * 1024,
    tcpConnectionCount: 3000,
    tcpConnectionWarmup: 5000,
    tcpConcurrency: 32,
    tcpEchoTrips: 5000,
  },
  quick: {
    w1Rounds: 1,
    w1DurationS: 5,
    w1WarmupS: 1,
    connections: 50,
    ruleRounds: 8,
    ruleDurationS: 1,
    transferBytes: 100 * 1024 * 1024,
    transferRounds: 1,
    transferWarmups: 1,
    sseEvents: 10,
    sseIntervalMs: 50,
    sseRounds: 1,
    wsTrips: 1000,
    wsRounds: 1,
    tunnels: 1000,
    bindSamples: 10,
    sessions: 10_000,
    sessionsWindowS: 30,
    tcpBytes: 256 * 1024 * 1024,
    tcpRounds: 1,
    tcpWarmupBytes: 64 * 1024 * 1024,
    tcpConnectionCount: 1000,
    tcpConnectionWarmup: 5000,
    tcpConcurrency: 32,
    tcpEchoTrips: 2000,
  },
  smoke: {
    w1Rounds: 1,
    w1DurationS: 1,
    w1WarmupS: 0,
    connections: 50,
    ruleRounds: 2,
    ruleDurationS: 1,
    transferBytes: 1024 * 1024,
    transferRounds: 1,
    transferWarmups: 0,
    sseEvents: 3,
    sseIntervalMs: 20,
    sseRounds: 1,
    wsTrips: 50,
    wsRounds: 1,
    tunnels: 20,
    bindSamples: 3,
    sessions: 40,
    sessionsWindowS: 2,
    tcpBytes: 1024 * 1024,
    tcpRounds: 1,
    tcpWarmupBytes: 0,
    tcpConnectionCount: 20,
    tcpConnectionWarmup: 0,
    tcpConcurrency: 4,
    tcpEchoTrips: 20,
  },
};

export interface BenchOptions {
  mode: Mode;
  sizes: Sizes;
  /** Where the JSON results go. */
  jsonPath: string;
  /** `wrk` or `node`; unset: wrk when installed. */
  loadgen: string | undefined;
  /** Profile mode: CPU profiles of edge and agent under W1 land here; no other workload runs. */
  cpuProfDir: string | undefined;
  /** What runs under the profiler (default small-get). */
  cpuProfWorkload: ProfiledWorkload;
  /** Floor mode: small GET direct, through a bare relay chain and through svcRouter; nothing else runs. */
  floor: boolean;
  /** Floor mode: µs of stand-in work per request for each extra floor side. */
  floorBusyUs: number[];
  /** Cluster mode: small GET entering the node holding the session and entering another node; nothing else runs. */
  cluster: boolean;
  /** Stream mode: this many pairs of the small GET without and with one live-stream subscriber; nothing else runs. */
  streamPairs: number | undefined;
  /** Sessions mode: this many quiet agent sessions over TCP and over TLS; nothing else runs. */
  sessions: number | undefined;
  /** --heartbeat-ms: the edge's SVC_HEARTBEAT_MS in sessions mode; undefined: the server's default. */
  heartbeatMs: number | undefined;
  /** --tcp: only the TCP rows (direct, svc tcp, ssh -L); nothing else runs. */
  tcp: boolean;
  /** --rules: only the rule rows (access rules, the pool, traffic rules); nothing else runs. */
  rules: boolean;
  /** --tcp-deadline: seconds each TCP run may take; undefined: a minute plus its work at a slow rate. */
  tcpDeadlineS: number | undefined;
  /** --tcp-local-host: the host `svc tcp` and `ssh -L` forward to (default 127.0.0.1). */
  tcpLocalHost: string;
}

/** The most sessions --sessions opens (the edge's and the helpers' file descriptors bound it first). */
const MAX_SESSIONS = 50_000;

/** The most pairs --stream runs. */
const MAX_STREAM_PAIRS = 1000;

/** Stand-in work of the extra floor sides by default: around where 0.45× and svcRouter fall on this machine. */
const DEFAULT_FLOOR_BUSY_US = [4, 8];

/** Workloads --cpu-prof can profile. */
export const PROFILED_WORKLOADS = [
  'small-get',
  'small-get-stream',
  'small-get-basic-auth',
  'download',
  'upload',
  'tcp-download',
  'tcp-upload',
  'tcp-connections',
] as const;
export type ProfiledWorkload = (typeof PROFILED_WORKLOADS)[number];

export const USAGE = `Usage: node --expose-gc bench/dist/bench.js [--quick | --smoke] [--json <path>] [--loadgen wrk|node] [--cpu-prof <dir> [--cpu-prof-workload <name>]] [--floor [--floor-busy <list>]] [--cluster] [--stream <pairs>] [--sessions [<n>] [--heartbeat-ms <ms>]] [--tcp] [--tcp-bytes <size>] [--tcp-deadline <s>] [--tcp-local-host <name>] [--rules]
  --quick           fewer and shorter runs (under a minute)
  --smoke           tiny sizes, a second or two per workload: checks every figure is produced
  --json <path>     results file (default bench/results/latest.json)
  --loadgen <name>  force wrk or the built-in Node generator (default: wrk when installed)
  --cpu-prof <dir>  only W1 through the tunnel, with --cpu-prof on svc-server and svc; prints their top functions
  --cpu-prof-workload small-get|small-get-stream|small-get-basic-auth|download|upload|tcp-download|tcp-upload|tcp-connections
                    what --cpu-prof runs through the tunnel (default small-get; small-get-stream with
                    one live request-stream subscriber attached; small-get-basic-auth through a second
                    agent's tunnel with --basic-auth, every request signed in; transfers move 1 GiB; tcp-* through
                    a \`svc tcp\` tunnel, the transfers --tcp-bytes, tcp-connections 20,000 short ones)
  --floor           only the small GET, in rounds of direct, a bare two-process relay that does no
                    work of its own (the floor for the tunnel's shape), and svcRouter
                    (JSON default bench/results/floor.json)
  --floor-busy <list>
                    µs of busy CPU per request in each floor process, one extra floor side per
                    value (default ${DEFAULT_FLOOR_BUSY_US.join(',')}; none: the bare floor alone)
  --cluster         only the small GET on two nodes sharing one PostgreSQL, entering the node that
                    holds the agent's session and entering the other one (one more hop); starts a
                    throwaway PostgreSQL (apt-get install -y postgresql) unless SVC_BENCH_DATABASE_URL
                    names one (JSON default bench/results/cluster.json)
  --stream <pairs>  only the small GET without and with one live request-stream subscriber, in
                    <pairs> alternating pairs (even, 2 to ${MAX_STREAM_PAIRS}); prints each pair's ratio and
                    their geometric mean with its 95% interval (JSON default bench/results/stream.json)
  --sessions [<n>]  only quiet agent sessions: n of them (default 10,000; --smoke 40) from helper
                    processes, over plain TCP and then TLS, each against a fresh edge: time to bind
                    all, edge and agent memory and file descriptors per session, CPU per
                    session-second while idle and with one request a minute per session
                    (JSON default bench/results/sessions.json); with --cpu-prof <dir>, a CPU
                    profile of the edge over each idle window, summarised
  --heartbeat-ms <ms>
                    with --sessions: the heartbeat interval the edge offers (SVC_HEARTBEAT_MS,
                    1000 to 60000; default the server's own)
  --rules           only the rule rows (basic auth, IP allow list, pool of two, three header rules,
                    a rate limit), each against its side without the rule, with the edge's and the
                    agents' share of each difference (JSON default bench/results/rules.json)
  --tcp             only the TCP rows: one local TCP service directly, through \`svc tcp\` and through
                    \`ssh -L\` via a throwaway sshd on loopback (apt-get install -y openssh-server;
                    skipped without): throughput each way, connections per second, echo round trip
                    (JSON default bench/results/tcp.json); without --tcp they end a full run
  --tcp-bytes <size>
                    bytes of each TCP transfer: 1GiB (default), 256MiB (--quick), 1MiB (--smoke), or
                    any number with KiB, MiB or GiB
  --tcp-deadline <s>
                    seconds each TCP run may take before the benchmark fails naming it (default a
                    minute plus the run's work at 8 MiB/s, or 100 connections or round trips per second)
  --tcp-local-host <name>
                    the host \`svc tcp\` and \`ssh -L\` forward to (default 127.0.0.1, no lookup;
                    localhost is what \`svc tcp <port>\` connects to, a name to look up)`;

/** A command line the benchmark cannot run: shown as its message and the usage, never a stack. */
export class UsageError extends Error {}

/** Parses argv; throws a UsageError with the usage text on anything unknown. */
export function parseOptions(argv: string[]): BenchOptions {
  let mode: Mode = 'default';
  let jsonPath: string | undefined;
  let floor = false;
  let cluster = false;
  let floorBusyUs: number[] | undefined;
  let loadgen: string | undefined;
  let cpuProfDir: string | undefined;
  let cpuProfWorkload: string = 'small-get';
  let streamPairs: number | undefined;
  let sessions: number | undefined;
  let heartbeatMs: number | undefined;
  let tcp = false;
  let rules = false;
  let tcpBytes: number | undefined;
  let tcpDeadlineS: number | undefined;
  let tcpLocalHost = '127.0.0.1';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${arg} needs a value\n${USAGE}`);
      return next;
    };
    if (arg === '--help' || arg === '-h') throw new UsageError(USAGE);
    else if (arg === '--quick') mode = 'quick';
    else if (arg === '--smoke') mode = 'smoke';
    else if (arg === '--json') jsonPath = path.resolve(value());
    else if (arg === '--loadgen') loadgen = value();
    else if (arg === '--cpu-prof') cpuProfDir = path.resolve(value());
    else if (arg === '--cpu-prof-workload') cpuProfWorkload = value();
    else if (arg === '--floor') floor = true;
    else if (arg === '--cluster') cluster = true;
    else if (arg === '--floor-busy') floorBusyUs = parseBusyList(value());
    else if (arg === '--stream') streamPairs = parseStreamPairs(value());
    else if (arg === '--sessions') sessions = argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--') ? parseSessions(value()) : 0;
    else if (arg === '--heartbeat-ms') heartbeatMs = parseHeartbeat(value());
    else if (arg === '--tcp') tcp = true;
    else if (arg === '--rules') rules = true;
    else if (arg === '--tcp-bytes') tcpBytes = parseByteSize(value());
    else if (arg === '--tcp-deadline') tcpDeadlineS = parseDeadline(value());
    else if (arg === '--tcp-local-host') tcpLocalHost = parseLocalHost(value());
    else throw new UsageError(`unknown argument ${arg}\n${USAGE}`);
  }
  if (heartbeatMs !== undefined && sessions === undefined) throw new UsageError(`--heartbeat-ms needs --sessions\n${USAGE}`);
  if (loadgen !== undefined && loadgen !== 'wrk' && loadgen !== 'node') throw new UsageError(`--loadgen must be wrk or node\n${USAGE}`);
  if (!(PROFILED_WORKLOADS as readonly string[]).includes(cpuProfWorkload)) {
    throw new UsageError(`--cpu-prof-workload must be one of ${PROFILED_WORKLOADS.join(', ')}\n${USAGE}`);
  }
  // --sessions takes --cpu-prof as a profile of the edge's idle window.
  const profiled = cpuProfDir !== undefined && sessions === undefined;
  if ([floor, cluster, profiled, streamPairs !== undefined, sessions !== undefined, tcp, rules].filter(Boolean).length > 1) {
    throw new UsageError(`--floor, --cluster, --stream, --sessions, --tcp, --rules and --cpu-prof are separate modes\n${USAGE}`);
  }
  if (!floor && floorBusyUs !== undefined) throw new UsageError(`--floor-busy needs --floor\n${USAGE}`);
  const resultsName = floor
    ? 'floor'
    : cluster
      ? 'cluster'
      : streamPairs !== undefined
        ? 'stream'
        : sessions !== undefined
          ? 'sessions'
          : tcp
            ? 'tcp'
            : rules
              ? 'rules'
              : 'latest';
  jsonPath ??= path.join(REPO_ROOT, `bench/results/${resultsName}.json`);
  return {
    mode,
    sizes: tcpBytes === undefined ? PRESETS[mode] : { ...PRESETS[mode], tcpBytes },
    jsonPath,
    loadgen,
    cpuProfDir,
    cpuProfWorkload: cpuProfWorkload as ProfiledWorkload,
    floor,
    floorBusyUs: floorBusyUs ?? DEFAULT_FLOOR_BUSY_US,
    cluster,
    streamPairs,
    // 0: --sessions without a number, the mode's own count.
    sessions: sessions === 0 ? PRESETS[mode].sessions : sessions,
    heartbeatMs,
    tcp,
    rules,
    tcpDeadlineS,
    tcpLocalHost,
  };
}

/** `--tcp-local-host`: a host name or an IPv4 address (no port: the service's is the benchmark's own). */
function parseLocalHost(text: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9.-]*$/.test(text))
    throw new UsageError(`--tcp-local-host takes a host name or an IPv4 address, not "${text}"\n${USAGE}`);
  return text;
}

/** The most bytes --tcp-bytes takes: 64 GiB. */
const MAX_TCP_BYTES = 64 * 1024 ** 3;

/** `--tcp-bytes`: a whole number of bytes, or a number with KiB, MiB or GiB (K, M, G, KB… read alike). */
export function parseByteSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(?:([KMG])(?:i?B)?|B)?$/i.exec(text.trim());
  const unit = match?.[2] ? 1024 ** ('KMG'.indexOf(match[2].toUpperCase()) + 1) : 1;
  const bytes = match ? Math.round(Number(match[1]) * unit) : Number.NaN;
  if (!Number.isFinite(bytes) || bytes < 1 || bytes > MAX_TCP_BYTES) {
    throw new UsageError(`--tcp-bytes takes a size from 1 byte to 64GiB such as 256MiB or 1GiB, not "${text}"\n${USAGE}`);
  }
  return bytes;
}

/** `--tcp-deadline`: whole seconds from 1 to 3600. */
function parseDeadline(text: string): number {
  const seconds = Number(text);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 3600)
    throw new UsageError(`--tcp-deadline takes whole seconds from 1 to 3600, not "${text}"\n${USAGE}`);
  return seconds;
}

/** --heartbeat-ms: a whole number of ms the edge accepts for SVC_HEARTBEAT_MS. */
function parseHeartbeat(text: string): number {
  const ms = Number(text);
  if (!Number.isInteger(ms) || ms < 1000 || ms > 60_000)
    throw new UsageError(`--heartbeat-ms takes 1000 to 60000, not "${text}"\n${USAGE}`);
  return ms;
}

/** The count of --sessions: a whole number from 1 to MAX_SESSIONS. */
function parseSessions(text: string): number {
  const sessions = Number(text);
  if (!Number.isInteger(sessions) || sessions < 1 || sessions > MAX_SESSIONS) {
    throw new UsageError(`--sessions takes a whole number from 1 to ${MAX_SESSIONS}\n${USAGE}`);
  }
  return sessions;
}

/** The pairs of --stream: an even whole number from 2 to MAX_STREAM_PAIRS (alternating pairs come in twos). */
function parseStreamPairs(text: string): number {
  const pairs = Number(text);
  if (!Number.isInteger(pairs) || pairs < 2 || pairs > MAX_STREAM_PAIRS || pairs % 2 !== 0) {
    throw new UsageError(`--stream takes an even number of pairs from 2 to ${MAX_STREAM_PAIRS}\n${USAGE}`);
  }
  return pairs;
}

/** `4,8` → [4, 8]; `none` → []. Each a whole number of µs from 1 to 1000. */
function parseBusyList(text: string): number[] {
  if (text === 'none') return [];
  const values = text.split(',').map((part) => Number(part));
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < 1 || v > 1000)) {
    throw new UsageError(`--floor-busy takes whole microseconds from 1 to 1000, comma-separated, or none\n${USAGE}`);
  }
  return values;
}
