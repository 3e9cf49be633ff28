import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { LoadGenerator } from './loadgen.js';
import type { LoadReport } from './machine-load.js';
import type { Sizes } from './options.js';
import type { SmallGetResult } from './w-small-get.js';
import type { SseResult } from './w-sse.js';
import type { StreamSubscriberResult } from './w-stream-subscriber.js';
import type { H2SmallGetResult, H2UploadResult } from './w-h2.js';
import type { TlsSessionResult } from './w-tls.js';
import type { AccessResult } from './w-access.js';
import type { TrafficResult } from './w-traffic.js';
import type { TransferResult } from './w-transfer.js';
import type { TunnelsResult } from './w-tunnels.js';
import type { WebSocketResult } from './w-websocket.js';
import type { TcpResult } from './w-tcp.js';
import { isTcpRow, tcpMarkdown, tcpRows } from './tcp-report.js';
import type { Row } from './row.js';

export type { Row } from './row.js';

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  os: string;
  loadGenerator: string;
  loadAverage: number[];
}

export interface Results {
  smallGet: SmallGetResult;
  tls: TlsSessionResult;
  access: AccessResult;
  traffic: TrafficResult;
  streamSubscriber: StreamSubscriberResult;
  download: TransferResult;
  upload: TransferResult;
  /** Null when h2load is not installed. */
  h2SmallGet: H2SmallGetResult | null;
  h2Upload: H2UploadResult;
  sse: SseResult;
  websocket: WebSocketResult;
  tunnels: TunnelsResult;
  tcp: TcpResult;
}

/** CPU model, cores, Node, and the load generator with its version. */
export function machineInfo(generator: LoadGenerator): MachineInfo {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m);
  let loadGenerator = 'built-in Node generator (http.Agent keep-alive, 50 sockets)';
  if (generator === 'wrk') {
    let banner = '';
    try {
      banner = execFileSync('wrk', ['--version'], { encoding: 'utf8' });
    } catch (error) {
      banner = String((error as { stdout?: string }).stdout ?? '');
    }
    loadGenerator = `wrk ${banner.match(/^wrk (\S+)/m)?.[1] ?? ''} (1 thread)`.replace('  ', ' ');
  }
  return {
    cpu: cpuinfo?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    loadGenerator,
    loadAverage: os.loadavg().map((n) => Math.round(n * 100) / 100),
  };
}

const KIB = 1024;

/** The results as table rows, each with its goal from the performance issue. */
export function buildRows(r: Results, sizes: Sizes): Row[] {
  const w1 = r.smallGet;
  const mib = (r.download.bytes / 2 ** 20).toFixed(0);
  const n = r.tunnels.count;
  const signed = (ms: number): string => `${ms >= 0 ? '+' : ''}${ms.toFixed(2)} ms`;
  const signedUs = (us: number): string => `${us >= 0 ? '+' : ''}${us.toFixed(1)} µs`;
  // One row per line, so the list reads as the table it becomes.
  // prettier-ignore
  return [
    { id: 'w1_rps', metric: `Small GET (100 B, ${sizes.connections} conns), req/s`, ...w1.rps, goal: '≥ 0.45 × direct', met: w1.rps.ratio >= 0.45 },
    { id: 'w1_p50_ms', metric: 'Small GET p50, ms', ...w1.p50Ms, goal: '—', met: null },
    { id: 'w1_p99_ms', metric: 'Small GET p99, ms', ...w1.p99Ms, goal: '≤ 10 ms', met: w1.p99Ms.tunnel <= 10 },
    { id: 'w1_errors', metric: 'Small GET errors (all runs)', direct: w1.errors.direct, tunnel: w1.errors.tunnel, ratio: null, goal: '—', met: null },
    { id: 'cpu_us_per_req', metric: 'CPU per request, edge + agent, µs', direct: null, tunnel: w1.cpuUsPerRequest.total, ratio: null, goal: '≤ 40 µs', met: w1.cpuUsPerRequest.total <= 40 },
    { id: 'cpu_us_per_req_edge', metric: '… of which edge, µs', direct: null, tunnel: w1.cpuUsPerRequest.edge, ratio: null, goal: '—', met: null },
    { id: 'cpu_us_per_req_agent', metric: '… of which agent, µs', direct: null, tunnel: w1.cpuUsPerRequest.agent, ratio: null, goal: '—', met: null },
    { id: 'cpu_us_per_req_kernel', metric: '… of which in the kernel (system calls), edge + agent, µs', direct: null, tunnel: w1.cpuUsPerRequest.kernel, ratio: null, goal: '—', met: null },
    { id: 'tls_w1_rps', metric: 'Small GET with the agent session over TLS, req/s', direct: null, tunnel: r.tls.rps.tls, ratio: r.tls.rps.ratio, ratioText: `${r.tls.rps.ratio.toFixed(2)}× plain session`, goal: '—', met: null },
    { id: 'tls_cpu_us_per_req', metric: '… CPU per request, edge + agent, µs (plain session in the same pairs)', direct: r.tls.cpuUsPerRequest.plain, tunnel: r.tls.cpuUsPerRequest.tls, ratio: null, ratioText: `+${(r.tls.cpuUsPerRequest.tls - r.tls.cpuUsPerRequest.plain).toFixed(1)} µs`, goal: '—', met: null },
    ...ruleRows(r),
    {
      id: 'stream_w1_rps', metric: 'Small GET with one live request-stream subscriber attached, req/s', direct: null, tunnel: r.streamSubscriber.rps.with,
      ratio: r.streamSubscriber.rps.ratio, ratioText: `${r.streamSubscriber.rps.ratio.toFixed(2)}× without`, goal: '≥ 0.95 × without, no record missed', met: r.streamSubscriber.rps.ratio >= 0.95 && r.streamSubscriber.dropped === 0,
    },
    {
      id: 'stream_edge_cpu_us_per_req', metric: '… edge CPU per request, µs (without a subscriber in the same pairs)', direct: r.streamSubscriber.edgeCpuUsPerRequest.without,
      tunnel: r.streamSubscriber.edgeCpuUsPerRequest.with, ratio: null, ratioText: signedUs(r.streamSubscriber.edgeCpuUsPerRequest.with - r.streamSubscriber.edgeCpuUsPerRequest.without), goal: '—', met: null,
    },
    {
      id: 'stream_subscriber_cpu_us_per_req', metric: '… the subscriber process\'s own CPU per request, µs', direct: null,
      tunnel: r.streamSubscriber.subscriberCpuUsPerRequest, ratio: null, goal: '—', met: null,
    },
    {
      id: 'stream_cpu_us_per_req', metric: '… CPU per request, edge + agent, µs (without a subscriber in the same pairs)', direct: r.streamSubscriber.cpuUsPerRequest.without,
      tunnel: r.streamSubscriber.cpuUsPerRequest.with, ratio: null, ratioText: signedUs(r.streamSubscriber.cpuUsPerRequest.with - r.streamSubscriber.cpuUsPerRequest.without), goal: '—', met: null,
    },
    { id: 'stream_events', metric: '… records the subscriber received (and missed: told of, or never arrived)', direct: null, tunnel: r.streamSubscriber.events, ratio: null, ratioText: `${r.streamSubscriber.dropped} missed`, goal: '—', met: null },
    { id: 'download_mib_s', metric: `Download ${mib} MiB, MiB/s`, ...r.download.mibPerS, goal: '≥ 750 MiB/s', met: r.download.mibPerS.tunnel >= 750 },
    { id: 'download_cpu_s_gib', metric: 'Download CPU, edge + agent, s/GiB', direct: null, tunnel: r.download.cpuSPerGiB, ratio: null, goal: '—', met: null },
    { id: 'upload_mib_s', metric: `Upload ${mib} MiB, MiB/s`, ...r.upload.mibPerS, goal: '≥ 600 MiB/s', met: r.upload.mibPerS.tunnel >= 600 },
    { id: 'upload_cpu_s_gib', metric: 'Upload CPU, edge + agent, s/GiB', direct: null, tunnel: r.upload.cpuSPerGiB, ratio: null, goal: '—', met: null },
    ...h2Rows(r, mib),
    {
      id: 'sse_first_ms', metric: 'SSE first event, ms', direct: r.sse.firstMs.direct, tunnel: r.sse.firstMs.tunnel,
      ratio: r.sse.firstMs.tunnel / r.sse.firstMs.direct, ratioText: signed(r.sse.firstMs.diff), goal: '≤ direct + 5 ms', met: r.sse.firstMs.diff <= 5,
    },
    { id: 'sse_delay_ms', metric: 'SSE event delay, median, ms', direct: r.sse.delayMs.direct, tunnel: r.sse.delayMs.tunnel, ratio: null, ratioText: signed(r.sse.delayMs.tunnel - r.sse.delayMs.direct), goal: '—', met: null },
    { id: 'sse_worst_extra_ms', metric: 'SSE worst event delay over direct, ms', direct: null, tunnel: r.sse.worstExtraDelayMs, ratio: null, goal: '≤ 50 ms', met: r.sse.worstExtraDelayMs <= 50 },
    { id: 'ws_rtt_ms', metric: 'WebSocket echo RTT, median, ms', ...r.websocket.rttMs, goal: '≤ 0.25 ms', met: r.websocket.rttMs.tunnel <= 0.25 },
    { id: 'ws_rtt_p99_ms', metric: 'WebSocket echo RTT, p99, ms', ...r.websocket.p99Ms, goal: '—', met: null },
    { id: 'edge_kib_per_tunnel', metric: 'Edge memory per idle tunnel, KiB (heap + external)', direct: null, tunnel: r.tunnels.edgeBytesPerTunnel / KIB, ratio: null, goal: '≤ 16 KiB', met: r.tunnels.edgeBytesPerTunnel / KIB <= 16 },
    { id: 'edge_rss_kib_per_tunnel', metric: '… edge by VmRSS, KiB', direct: null, tunnel: r.tunnels.edgeRssBytesPerTunnel / KIB, ratio: null, goal: '—', met: null },
    { id: 'agent_kib_per_tunnel', metric: 'Agent (SDK) memory per extra tunnel, KiB (heap + external)', direct: null, tunnel: r.tunnels.agentBytesPerTunnel / KIB, ratio: null, goal: '≤ 64 KiB', met: r.tunnels.agentBytesPerTunnel / KIB <= 64 },
    { id: 'agent_rss_kib_per_tunnel', metric: '… agent by VmRSS, KiB', direct: null, tunnel: r.tunnels.agentRssBytesPerTunnel / KIB, ratio: null, goal: '—', met: null },
    { id: 'tunnels_bind_all_s', metric: `Bind ${n} tunnels from one process (one session), s`, direct: null, tunnel: r.tunnels.bindAllS, ratio: null, goal: '—', met: null },
    { id: 'tunnels_responding', metric: `Tunnels of those ${n} answering 200`, direct: null, tunnel: r.tunnels.responding, ratio: null, goal: `all ${n}`, met: r.tunnels.responding === n },
    { id: 'bind_latency_ms', metric: 'Bind latency, forward() to live, median, ms', direct: null, tunnel: r.tunnels.bindLatencyMs, ratio: null, goal: '—', met: null },
    { id: 'first_response_ms', metric: 'forward() to first 200 through the edge, median, ms', direct: null, tunnel: r.tunnels.firstResponseMs, ratio: null, goal: '—', met: null },
    ...tcpRows(r.tcp),
  ];
}

/** The rule rows: W1 with each access rule, a pool and each traffic rule, against the same without it in the same pairs. */
export function ruleRows(r: Pick<Results, 'access' | 'traffic'>): Row[] {
  const row = (id: string, metric: string, result: AccessResult['basicAuth'], against = 'no rules'): Row[] => {
    // The median of each pair's difference: a difference of medians would pair runs that did not run together.
    const extra = result.cpuUsPerRequest.extra;
    // prettier-ignore
    return [
      { id: `${id}_w1_rps`, metric, direct: null, tunnel: result.rps.rule, ratio: result.rps.ratio, ratioText: `${result.rps.ratio.toFixed(2)}× ${against}`, goal: '—', met: null },
      {
        id: `${id}_cpu_us_per_req`, metric: `… CPU per request, edge + agents, µs (${against} in the same pairs; median of the pairs' differences)`, direct: result.cpuUsPerRequest.plain, tunnel: result.cpuUsPerRequest.rule,
        ratio: null, ratioText: `${signed(extra)} µs (${intervalText(result.extraInterval)}edge ${signed(result.extraUsPerRequest.edge)}, agents ${signed(result.extraUsPerRequest.agents)})`, goal: '≤ +3 µs', met: extra <= 3,
      },
    ];
  };
  return [
    ...row('basic_auth', 'Small GET with basic auth on (every request signed in), req/s', r.access.basicAuth),
    ...row('cidr_allow', 'Small GET with an IP allow list, req/s', r.access.cidrAllow),
    ...row(
      'pool_of_two',
      'Small GET through a pool of two members (--pool), req/s',
      r.access.pool,
      'two tunnels without a pool, the load split',
    ),
    ...row('header_rules', 'Small GET with three header rules (two request, one response), req/s', r.traffic.headerRules),
    ...row('rate_limit', 'Small GET with a rate limit never reached, req/s', r.traffic.rateLimit),
  ];
}

/** The HTTP/2 rows: small GET (when h2load ran) and uploads, each against direct HTTP/2, and the upload against HTTP/1.1 with TLS. */
function h2Rows(r: Results, mib: string): Row[] {
  const get = r.h2SmallGet;
  const up = r.h2Upload;
  // prettier-ignore
  return [
    ...(get
      ? [
          { id: 'h2_w1_rps', metric: `Small GET over HTTP/2 with TLS (h2load, 50 sessions), req/s`, ...get.rps, goal: '—', met: null },
          { id: 'h2_w1_mean_ms', metric: '… mean request time, ms', ...get.meanMs, goal: '—', met: null },
          { id: 'h2_cpu_us_per_req', metric: '… CPU per request, edge + agent, µs', direct: null, tunnel: get.cpuUsPerRequest, ratio: null, goal: '—', met: null },
        ]
      : []),
    { id: 'h2_upload_mib_s', metric: `Upload ${mib} MiB over HTTP/2 with TLS, MiB/s`, ...up.mibPerS, goal: '—', met: null },
    {
      id: 'h2_upload_vs_https', metric: '… through the edge against HTTP/1.1 with TLS in the same rounds, MiB/s', direct: up.againstHttps.https, tunnel: up.againstHttps.h2,
      ratio: up.againstHttps.ratio, ratioText: `${up.againstHttps.ratio.toFixed(2)}× HTTP/1.1`, goal: '≥ 0.7 × HTTP/1.1', met: up.againstHttps.ratio >= 0.7,
    },
  ];
}

/** `95%: low to high; `, or nothing when too few pairs give no interval (--smoke). */
function intervalText(interval: { low: number; high: number }): string {
  return Number.isNaN(interval.low) ? '' : `95%: ${signed(interval.low)} to ${signed(interval.high)}; `;
}

function signed(us: number): string {
  return `${us >= 0 ? '+' : ''}${us.toFixed(1)}`;
}

/** A number with as many decimals as its size deserves. */
export function fmt(value: number | null): string {
  if (value === null) return '—';
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100 || Number.isInteger(value)) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

/** The results table and machine info as markdown. */
export function markdown(
  rows: readonly Row[],
  machine: MachineInfo,
  load: LoadReport,
  mode: string,
  command: string,
  tcp: TcpResult | undefined,
): string {
  const contention = `- Other processes used ${load.foreignPercent.toFixed(1)}% of the machine's CPU during the run (${load.foreignS.toFixed(1)} CPU-s)${load.foreignPercent > 5 ? ': **the figures are disturbed; rerun on a quiet machine**' : ''}.`;
  const lines = [
    `## svcRouter benchmark (${mode})`,
    '',
    `- CPU: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB; ${machine.os}`,
    `- Node ${machine.node}; load generator: ${machine.loadGenerator}; load average at start ${machine.loadAverage.join(' ')}`,
    `- Command: \`${command}\``,
    contention,
    '- Medians of matched pairs (direct, tunnel, direct, tunnel…); ratio = median of per-pair tunnel/direct. Small GET, transfers and WebSocket echo start with unrecorded warm-up runs of both sides (--smoke skips most).',
    '',
    '| metric | direct | svcRouter | ratio | goal | met? |',
    '|---|---:|---:|---:|---|:---:|',
  ];
  const tcpRowsShown = rows.filter(isTcpRow);
  const httpRows = rows.filter((row) => !isTcpRow(row));
  // --tcp: the HTTP table's header and its note on pairs have no rows to describe.
  if (httpRows.length === 0) lines.splice(lines.length - 4);
  for (const row of httpRows) {
    const ratio = row.ratioText ?? (row.ratio === null ? '—' : `${row.ratio.toFixed(2)}×`);
    const met = row.met === null ? '' : row.met ? 'yes' : '**no**';
    lines.push(`| ${row.metric} | ${fmt(row.direct)} | ${fmt(row.tunnel)} | ${ratio} | ${row.goal} | ${met} |`);
  }
  if (tcp && tcpRowsShown.length > 0) lines.push('', tcpMarkdown(tcpRowsShown, tcp, fmt));
  return lines.join('\n');
}
