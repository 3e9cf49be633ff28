/**
 * `npm run bench`: svcRouter tunnel vs direct, side by side, in one run. Starts a real origin,
 * `svc-server` and `svc` processes, runs each workload directly against the origin and through
 * the tunnel (visitor → edge → agent → origin) as interleaved matched pairs, then prints a
 * markdown table on stdout and writes the JSON results. Progress goes to stderr.
 * Options: see USAGE in options.ts.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { profileMarkdown, summarizeProfile } from './cpu-profile.js';
import { startLoadMeter, type LoadReport } from './machine-load.js';
import { pickLoadGenerator, runLoad, type LoadGenerator } from './loadgen.js';
import { parseOptions, UsageError, type BenchOptions } from './options.js';
import { cpuSeconds, REPO_ROOT } from './proc.js';
import { buildRows, machineInfo, markdown, ruleRows, type MachineInfo, type Results, type Row } from './report.js';
import { startSystem, type BenchSystem } from './system.js';
import { smallGet, smallGetSpec, tunnelLoad } from './w-small-get.js';
import { accessRules } from './w-access.js';
import { trafficRules } from './w-traffic.js';
import { sse } from './w-sse.js';
import { download, transfer, upload } from './w-transfer.js';
import { manyTunnels } from './w-tunnels.js';
import { tlsSession } from './w-tls.js';
import { streamMarkdown, streamSubscriber, subscribe } from './w-stream-subscriber.js';
import { websocketEcho } from './w-websocket.js';
import { h2SmallGet, h2Uploads } from './w-h2.js';
import { h2loadAvailable } from './h2-clients.js';
import { floorComparison, floorMarkdown } from './w-floor.js';
import { startCluster } from './cluster-system.js';
import { clusterHop, clusterMarkdown } from './w-cluster.js';
import { manySessions, sessionsMarkdown } from './w-sessions.js';
import { startTcpAgent, startTcpOriginProcess, tcpTunnels, type TcpResult } from './w-tcp.js';
import { tcpRows } from './tcp-report.js';
import { tcpConnections, tcpDownload, tcpUpload } from './tcp-clients.js';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** Every workload, in a fixed order, on one set of processes. */
async function runAll(options: BenchOptions, generator: LoadGenerator): Promise<{ results: Results; load: LoadReport }> {
  const sizes = options.sizes;
  const system = await startSystem();
  const meter = startLoadMeter(() => system.processIds());
  try {
    log(`edge on :${system.httpPort}, origin on :${system.originPort}, agent pid ${system.agent.pid}, edge pid ${system.server.pid}`);
    log('W1 small GET');
    const smallGetResult = await smallGet(system, generator, sizes, log);
    log('W1 with the agent session over TLS');
    const tls = await tlsSession(system, generator, sizes, log);
    log('W1 through tunnels with access rules');
    const access = await accessRules(system, generator, sizes, log);
    log('W1 through tunnels with traffic rules');
    const traffic = await trafficRules(system, generator, sizes, log);
    log('W1 with one live request-stream subscriber');
    const stream = await streamSubscriber(system, generator, sizes, log);
    log('bulk transfer');
    const download = await transfer(system, 'download', sizes, log);
    const upload = await transfer(system, 'upload', sizes, log);
    log('HTTP/2 with TLS: small GET and uploads');
    const h2Get = (await h2loadAvailable()) ? await h2SmallGet(system, sizes, log) : null;
    if (!h2Get) log('  h2load is not installed (Debian nghttp2-client): HTTP/2 small GET skipped');
    const h2Upload = await h2Uploads(system, sizes, log);
    log('server-sent events');
    const sseResult = await sse(system, sizes, log);
    log('WebSocket echo');
    const websocket = await websocketEcho(system, sizes, log);
    log('TCP tunnels: direct, svc tcp and ssh -L');
    const tcp = await tcpTunnels(system, sizes, log, options.tcpDeadlineS, options.tcpLocalHost);
    log('idle tunnels, 1,000 tunnels, bind latency');
    const tunnels = await manyTunnels(system, sizes, log);
    const load = meter.stop();
    log(`other processes used ${load.foreignS.toFixed(1)} CPU-s (${load.foreignPercent.toFixed(1)}% of the machine) during the run`);
    return {
      results: {
        smallGet: smallGetResult,
        tls,
        access,
        traffic,
        streamSubscriber: stream,
        download,
        upload,
        h2SmallGet: h2Get,
        h2Upload,
        sse: sseResult,
        websocket,
        tunnels,
        tcp,
      },
      load,
    };
  } finally {
    await system.close();
  }
}

/** Bytes each profiled transfer moves: long enough for a profile worth reading. */
const PROFILED_TRANSFER_BYTES = 1024 * 1024 * 1024;

/** --cpu-prof: one workload through the tunnel only, with both processes profiled; prints their busiest functions. */
async function profile(options: BenchOptions, generator: LoadGenerator, dir: string): Promise<void> {
  const sizes = options.sizes;
  const serverDir = path.join(dir, 'server');
  const agentDir = path.join(dir, 'agent');
  const system = await startSystem({
    serverNodeArgs: ['--cpu-prof', `--cpu-prof-dir=${serverDir}`],
    agentNodeArgs: ['--cpu-prof', `--cpu-prof-dir=${agentDir}`],
  });
  try {
    if (options.cpuProfWorkload === 'small-get' || options.cpuProfWorkload === 'small-get-stream') {
      const subscriber = options.cpuProfWorkload === 'small-get-stream' ? await subscribe(system) : undefined;
      if (sizes.w1WarmupS > 0) await runLoad(generator, smallGetSpec(system, 'tunnel', sizes, sizes.w1WarmupS));
      const run = await tunnelLoad(system, generator, smallGetSpec(system, 'tunnel', sizes, sizes.w1DurationS));
      await subscriber?.proc.stop('SIGTERM');
      log(
        `profiled W1${subscriber ? ' with a stream subscriber' : ''}: ${run.rps.toFixed(0)} req/s, ${run.requests} requests, edge ${run.edgeCpuS.toFixed(2)} s CPU, agent ${run.agentCpuS.toFixed(2)} s CPU`,
      );
    } else if (options.cpuProfWorkload === 'small-get-basic-auth') {
      // The edge's profile is the one to read: the agent profiled is the system's own, idle here.
      const user = 'bench:bench-password';
      await system.startAgent('xauth', false, ['--basic-auth', user]);
      const spec = {
        ...smallGetSpec(system, 'tunnel', sizes, sizes.w1DurationS),
        host: 'xauth.localhost',
        headers: { authorization: `Basic ${Buffer.from(user).toString('base64')}` },
      };
      if (sizes.w1WarmupS > 0) await runLoad(generator, { ...spec, durationS: sizes.w1WarmupS });
      const edgeCpu0 = cpuSeconds(system.server.pid);
      const run = await runLoad(generator, spec);
      log(
        `profiled W1 with basic auth: ${run.rps.toFixed(0)} req/s, ${run.requests} requests, edge ${(cpuSeconds(system.server.pid) - edgeCpu0).toFixed(2)} s CPU`,
      );
    } else if (options.cpuProfWorkload.startsWith('tcp-')) {
      await profileTcp(system, options, agentDir);
    } else {
      const move = options.cpuProfWorkload === 'download' ? download : upload;
      const pids = [system.server.pid, system.agent.pid];
      const cpu0 = pids.map(cpuSeconds);
      const seconds = await move(system.httpPort, PROFILED_TRANSFER_BYTES);
      const [edgeCpuS, agentCpuS] = pids.map((pid, i) => cpuSeconds(pid) - cpu0[i]!);
      log(
        `profiled ${options.cpuProfWorkload} of 1 GiB: ${(1024 / seconds).toFixed(0)} MiB/s, edge ${edgeCpuS!.toFixed(2)} s CPU, agent ${agentCpuS!.toFixed(2)} s CPU`,
      );
    }
  } finally {
    // A graceful stop is what makes --cpu-prof write its file.
    await system.close();
  }
  for (const [label, where] of [
    ['svc-server (edge)', serverDir],
    ['svc (agent)', agentDir],
  ] as const) {
    const files = (await readdir(where)).filter((f) => f.endsWith('.cpuprofile'));
    for (const file of files) {
      const full = path.join(where, file);
      process.stdout.write(`${profileMarkdown(label, full, summarizeProfile(full))}\n\n`);
    }
  }
}

/** Short connections the tcp-connections profile opens: enough for the connection path to outweigh startup. */
const PROFILED_CONNECTIONS = 20_000;

/** --cpu-prof-workload tcp-*: one transfer of the TCP size through a `svc tcp` agent started with --cpu-prof. */
async function profileTcp(system: Awaited<ReturnType<typeof startSystem>>, options: BenchOptions, agentDir: string): Promise<void> {
  const bytes = options.sizes.tcpBytes;
  const origin = await startTcpOriginProcess();
  const { agent, port } = await startTcpAgent(system, origin.port, ['--cpu-prof', `--cpu-prof-dir=${agentDir}`]);
  try {
    const pids = [system.server.pid, agent.pid];
    const cpu0 = pids.map(cpuSeconds);
    const deadline = { label: `profiled ${options.cpuProfWorkload}`, ms: (options.tcpDeadlineS ?? 600) * 1000 };
    let done: string;
    if (options.cpuProfWorkload === 'tcp-connections') {
      const perS = await tcpConnections(port, PROFILED_CONNECTIONS, options.sizes.tcpConcurrency, deadline);
      done = `${PROFILED_CONNECTIONS} connections: ${perS.toFixed(0)}/s`;
    } else {
      const seconds = await (options.cpuProfWorkload === 'tcp-upload' ? tcpUpload : tcpDownload)(port, bytes, deadline);
      done = `${(bytes / 2 ** 20).toFixed(0)} MiB: ${(bytes / 2 ** 20 / seconds).toFixed(0)} MiB/s`;
    }
    const [edgeCpuS, agentCpuS] = pids.map((pid, i) => cpuSeconds(pid) - cpu0[i]!);
    log(`profiled ${options.cpuProfWorkload} of ${done}, edge ${edgeCpuS!.toFixed(2)} s CPU, tcp agent ${agentCpuS!.toFixed(2)} s CPU`);
  } finally {
    // A graceful stop is what makes --cpu-prof write its file.
    await agent.stop('SIGINT');
    await origin.proc.stop('SIGTERM');
  }
}

/** A part of a full run on its own (--tcp, --rules): its rows printed and written as a full run's are. */
interface RowsOnly<R extends object> {
  /** The first progress line, of this machine. */
  banner(machine: MachineInfo): string;
  /** Named after the mode in the report's title. */
  label: string;
  measure(system: BenchSystem): Promise<R>;
  rows(results: R): Row[];
  tcp?(results: R): TcpResult;
}

/** Starts one edge, measures, stops it, prints the report and writes the JSON (`results` as `measure` gave them). */
async function rowsOnly<R extends object>(
  options: BenchOptions,
  generator: LoadGenerator,
  command: string,
  part: RowsOnly<R>,
): Promise<void> {
  const machine = machineInfo(generator);
  log(part.banner(machine));
  const started = performance.now();
  const system = await startSystem();
  const meter = startLoadMeter(() => system.processIds());
  let results: R;
  let load: LoadReport;
  try {
    results = await part.measure(system);
    load = meter.stop();
  } finally {
    await system.close();
  }
  const rows = part.rows(results);
  const elapsedS = (performance.now() - started) / 1000;
  process.stdout.write(
    `${markdown(rows, machine, load, `${options.mode}, ${part.label}`, command, part.tcp?.(results))}\n\nRun took ${elapsedS.toFixed(0)} s.\n`,
  );
  await writeJson(options.jsonPath, {
    schema: 1,
    date: new Date().toISOString(),
    mode: options.mode,
    command,
    elapsedS,
    machine,
    load,
    sizes: options.sizes,
    rows,
    results,
  });
}

/** --tcp: only the TCP rows, on one edge. */
function tcpOnly(options: BenchOptions, generator: LoadGenerator, command: string): Promise<void> {
  return rowsOnly(options, generator, command, {
    banner: () =>
      `svcRouter benchmark, TCP rows only, ${options.mode} sizes, ${(options.sizes.tcpBytes / 2 ** 20).toFixed(0)} MiB per transfer`,
    label: 'TCP only',
    measure: async (system) => ({
      tcp: await tcpTunnels(system, options.sizes, log, options.tcpDeadlineS, options.tcpLocalHost),
    }),
    rows: ({ tcp }) => tcpRows(tcp),
    tcp: ({ tcp }) => tcp,
  });
}

/** --rules: only the rule rows, on one edge, after a warm-up of the small GET. */
function rulesOnly(options: BenchOptions, generator: LoadGenerator, command: string): Promise<void> {
  return rowsOnly(options, generator, command, {
    banner: (machine) => `svcRouter benchmark, rule rows only, ${options.mode} sizes, load generator ${machine.loadGenerator}`,
    label: 'rule rows only',
    measure: async (system) => {
      // The edge warms up as in a full run, where the small GET comes first.
      await runLoad(generator, smallGetSpec(system, 'tunnel', options.sizes, Math.max(1, options.sizes.w1WarmupS)));
      log('W1 through tunnels with access rules');
      const access = await accessRules(system, generator, options.sizes, log);
      log('W1 through tunnels with traffic rules');
      const traffic = await trafficRules(system, generator, options.sizes, log);
      return { access, traffic };
    },
    rows: ruleRows,
  });
}

/** A comparison run on its own: --floor, --cluster and --stream. */
interface Comparison<S extends { close(): Promise<void> }, R> {
  /** Named in the first progress line. */
  title: string;
  /** The results' key in the JSON file. */
  key: 'floor' | 'cluster' | 'stream';
  start(): Promise<S>;
  measure(system: S): Promise<R>;
  /** The markdown report, without its final newline. */
  report(result: R): string;
}

/** Starts the comparison's processes, measures, stops them, prints the report and writes the JSON. */
async function runComparison<S extends { close(): Promise<void> }, R>(
  options: BenchOptions,
  generator: LoadGenerator,
  command: string,
  comparison: Comparison<S, R>,
): Promise<void> {
  const machine = machineInfo(generator);
  log(`svcRouter benchmark, ${comparison.title}, ${options.mode} sizes, load generator ${machine.loadGenerator}`);
  const system = await comparison.start();
  let result: R;
  try {
    result = await comparison.measure(system);
  } finally {
    await system.close();
  }
  process.stdout.write(`${comparison.report(result)}\n`);
  await writeJson(options.jsonPath, {
    schema: 1,
    date: new Date().toISOString(),
    mode: options.mode,
    command,
    machine,
    sizes: options.sizes,
    [comparison.key]: result,
  });
}

/** --floor: W1 direct, through the bare relay floor and through svcRouter, in interleaved rounds. */
function floor(options: BenchOptions, generator: LoadGenerator, command: string): Promise<void> {
  return runComparison(options, generator, command, {
    title: 'floor comparison',
    key: 'floor',
    start: () => startSystem(),
    measure: (system) => floorComparison(system, generator, options.sizes, options.floorBusyUs, log),
    report: (result) => floorMarkdown(result, command),
  });
}

/** --cluster: the hop between two edge nodes against one edge. */
function cluster(options: BenchOptions, generator: LoadGenerator, command: string): Promise<void> {
  return runComparison(options, generator, command, {
    title: 'cluster hop',
    key: 'cluster',
    start: () => startCluster(process.env.SVC_BENCH_DATABASE_URL || undefined),
    measure: (system) => clusterHop(system, generator, options.sizes, log),
    report: (result) => `${clusterMarkdown(result)}\n\nCommand: \`${command}\``,
  });
}

/** --stream: the small GET without and with one live-stream subscriber, in as many pairs as asked. */
function stream(options: BenchOptions, generator: LoadGenerator, command: string, pairs: number): Promise<void> {
  return runComparison(options, generator, command, {
    title: `live-stream cost in ${pairs} pairs`,
    key: 'stream',
    start: () => startSystem(),
    measure: (system) => streamSubscriber(system, generator, { ...options.sizes, w1Rounds: pairs }, log),
    report: (result) => streamMarkdown(result, command),
  });
}

/** --sessions: quiet agent sessions, each transport against its own fresh edge. */
async function sessions(options: BenchOptions, generator: LoadGenerator, command: string, count: number): Promise<void> {
  const machine = machineInfo(generator);
  log(
    `svcRouter benchmark, ${count} quiet sessions, ${options.mode} sizes${options.heartbeatMs ? `, heartbeat ${options.heartbeatMs} ms` : ''}`,
  );
  const result = await manySessions(count, options.sizes.sessionsWindowS, log, options.cpuProfDir, options.heartbeatMs);
  process.stdout.write(`${sessionsMarkdown(result, command)}\n`);
  for (const phase of result.phases) {
    if (phase.idleProfile)
      process.stdout.write(
        `\n${profileMarkdown(`svc-server (edge), ${phase.transport} sessions idle`, phase.idleProfile, summarizeProfile(phase.idleProfile))}\n`,
      );
  }
  await writeJson(options.jsonPath, {
    schema: 1,
    date: new Date().toISOString(),
    mode: options.mode,
    command,
    machine,
    sizes: options.sizes,
    sessions: result,
  });
}

async function writeJson(jsonPath: string, json: unknown): Promise<void> {
  await mkdir(path.dirname(jsonPath), { recursive: true });
  await writeFile(jsonPath, `${JSON.stringify(json, null, 2)}\n`);
  const shown = path.relative(REPO_ROOT, jsonPath);
  log(`results written to ${shown.startsWith('..') ? jsonPath : shown}`);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const generator = pickLoadGenerator(options.loadgen);
  const command = `node ${[...process.execArgv, path.relative(process.cwd(), process.argv[1] ?? ''), ...process.argv.slice(2)].join(' ')}`;
  if (options.sessions !== undefined) return sessions(options, generator, command, options.sessions);
  if (options.cpuProfDir) return profile(options, generator, options.cpuProfDir);
  if (options.floor) return floor(options, generator, command);
  if (options.cluster) return cluster(options, generator, command);
  if (options.streamPairs !== undefined) return stream(options, generator, command, options.streamPairs);
  if (options.tcp) return tcpOnly(options, generator, command);
  if (options.rules) return rulesOnly(options, generator, command);

  const machine = machineInfo(generator);
  log(`svcRouter benchmark, ${options.mode} mode, load generator ${machine.loadGenerator}`);
  const started = performance.now();
  const { results, load } = await runAll(options, generator);
  const rows = buildRows(results, options.sizes);
  const elapsedS = (performance.now() - started) / 1000;
  process.stdout.write(`${markdown(rows, machine, load, options.mode, command, results.tcp)}\n\nRun took ${elapsedS.toFixed(0)} s.\n`);

  await writeJson(options.jsonPath, {
    schema: 1,
    date: new Date().toISOString(),
    mode: options.mode,
    command,
    elapsedS,
    machine,
    load,
    sizes: options.sizes,
    rows,
    results,
  });
}

process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));
main().then(
  () => process.exit(0),
  (error: unknown) => {
    if (error instanceof UsageError) {
      const asked = process.argv.includes('--help') || process.argv.includes('-h');
      (asked ? process.stdout : process.stderr).write(`${error.message}\n`);
      process.exit(asked ? 0 : 2);
    }
    log(`benchmark failed: ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);
