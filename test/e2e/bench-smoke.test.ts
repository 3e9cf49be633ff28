import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freshDatabase } from './harness/cluster-support.js';

// The benchmark's figures must all be produced; their values are never asserted (speed is
// measured by the benchmark, not by tests). --smoke runs every workload with tiny sizes.

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BENCH = path.join(REPO_ROOT, 'bench/dist/bench.js');

/** Every figure the report must carry; `direct` marks those measured on both sides. */
const FIGURES: Array<{ id: string; direct: boolean }> = [
  { id: 'w1_rps', direct: true },
  { id: 'w1_p50_ms', direct: true },
  { id: 'w1_p99_ms', direct: true },
  { id: 'w1_errors', direct: true },
  { id: 'cpu_us_per_req', direct: false },
  { id: 'cpu_us_per_req_edge', direct: false },
  { id: 'cpu_us_per_req_agent', direct: false },
  { id: 'cpu_us_per_req_kernel', direct: false },
  { id: 'basic_auth_w1_rps', direct: false },
  { id: 'basic_auth_cpu_us_per_req', direct: true },
  { id: 'cidr_allow_w1_rps', direct: false },
  { id: 'cidr_allow_cpu_us_per_req', direct: true },
  { id: 'header_rules_w1_rps', direct: false },
  { id: 'header_rules_cpu_us_per_req', direct: true },
  { id: 'rate_limit_w1_rps', direct: false },
  { id: 'rate_limit_cpu_us_per_req', direct: true },
  { id: 'stream_w1_rps', direct: false },
  { id: 'stream_edge_cpu_us_per_req', direct: true },
  { id: 'stream_subscriber_cpu_us_per_req', direct: false },
  { id: 'stream_cpu_us_per_req', direct: true },
  { id: 'stream_events', direct: false },
  { id: 'download_mib_s', direct: true },
  { id: 'download_cpu_s_gib', direct: false },
  { id: 'upload_mib_s', direct: true },
  { id: 'upload_cpu_s_gib', direct: false },
  { id: 'h2_upload_mib_s', direct: true },
  { id: 'h2_upload_vs_https', direct: true },
  { id: 'sse_first_ms', direct: true },
  { id: 'sse_delay_ms', direct: true },
  { id: 'sse_worst_extra_ms', direct: false },
  { id: 'ws_rtt_ms', direct: true },
  { id: 'ws_rtt_p99_ms', direct: true },
  { id: 'edge_kib_per_tunnel', direct: false },
  { id: 'edge_rss_kib_per_tunnel', direct: false },
  { id: 'agent_kib_per_tunnel', direct: false },
  { id: 'agent_rss_kib_per_tunnel', direct: false },
  { id: 'tunnels_bind_all_s', direct: false },
  { id: 'tunnels_responding', direct: false },
  { id: 'bind_latency_ms', direct: false },
  { id: 'first_response_ms', direct: false },
];

/** The TCP rows: direct, svc tcp and ssh -L (`direct: false`: relay CPU, which direct has none of). */
const TCP_FIGURES: Array<{ id: string; direct: boolean }> = [
  { id: 'tcp_download_mib_s', direct: true },
  { id: 'tcp_download_cpu_s_gib', direct: false },
  { id: 'tcp_upload_mib_s', direct: true },
  { id: 'tcp_upload_cpu_s_gib', direct: false },
  { id: 'tcp_connections_per_s', direct: true },
  { id: 'tcp_connections_cpu_us', direct: false },
  { id: 'tcp_echo_rtt_ms', direct: true },
  { id: 'tcp_echo_rtt_p99_ms', direct: true },
];

interface Row {
  id: string;
  metric: string;
  direct: number | null;
  tunnel: number;
  ratio: number | null;
  goal: string;
  met: boolean | null;
  ssh?: number | null;
  sshRatio?: number | null;
}

const SSH_INSTALLED = ['/usr/sbin/sshd', '/usr/bin/ssh', '/usr/bin/ssh-keygen'].every((bin) => existsSync(bin));

/** Every TCP figure, numeric on each side; the ssh -L side whenever OpenSSH is installed (always in CI). */
function assertTcpFigures(rows: Row[]): void {
  assertEveryFigure(rows, TCP_FIGURES);
  if (!SSH_INSTALLED && process.env.CI === 'true') assert.fail('OpenSSH is missing; CI must compare TCP tunnels with ssh -L');
  for (const figure of TCP_FIGURES) {
    const row = rows.find((r) => r.id === figure.id)!;
    if (!SSH_INSTALLED) {
      assert.equal(row.ssh, null, `${figure.id}: no ssh figure without OpenSSH`);
      continue;
    }
    assert.ok(Number.isFinite(row.ssh), `${figure.id}: ssh value ${row.ssh} is not a number`);
    // Relay CPU of a tiny transfer may read 0 ticks for ssh, which leaves its ratio out.
    if (figure.direct) assert.ok(Number.isFinite(row.sshRatio), `${figure.id}: ratio to ssh ${row.sshRatio} is not a number`);
  }
}

async function runSmoke(
  extraArgs: string[],
  env: Record<string, string> = {},
): Promise<{ stdout: string; json: { rows: Row[]; machine: Record<string, unknown>; load: Record<string, number> } }> {
  assert.ok(existsSync(BENCH), `${BENCH} is missing: build first (npm run build)`);
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-bench-smoke-'));
  try {
    const jsonPath = path.join(dir, 'results.json');
    const child = spawn(process.execPath, ['--expose-gc', BENCH, '--smoke', '--json', jsonPath, ...extraArgs], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, `benchmark exited ${code}:\n${stderr}`);
    return { stdout, json: JSON.parse(await readFile(jsonPath, 'utf8')) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function assertEveryFigure(rows: Row[], figures = FIGURES): void {
  for (const figure of figures) {
    const row = rows.find((r) => r.id === figure.id);
    assert.ok(row, `figure ${figure.id} is missing`);
    assert.ok(Number.isFinite(row.tunnel), `${figure.id}: tunnel value ${row.tunnel} is not a number`);
    if (figure.direct) assert.ok(Number.isFinite(row.direct), `${figure.id}: direct value ${row.direct} is not a number`);
    else assert.equal(row.direct, null, `${figure.id} has no direct counterpart`);
    if (row.ratio !== null) assert.ok(Number.isFinite(row.ratio), `${figure.id}: ratio ${row.ratio} is not a number`);
    assert.equal(typeof row.goal, 'string');
    assert.ok(row.met === null || typeof row.met === 'boolean');
  }
}

function h2loadInstalled(): boolean {
  try {
    execFileSync('h2load', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('the benchmark in --smoke mode', () => {
  it('produces every figure, numeric, in the JSON file and the markdown table', async () => {
    const { stdout, json } = await runSmoke([]);
    assertEveryFigure(json.rows);
    // The HTTP/2 small GET needs h2load (Debian nghttp2-client); the bench skips it without.
    if (h2loadInstalled()) {
      assertEveryFigure(json.rows, [
        { id: 'h2_w1_rps', direct: true },
        { id: 'h2_w1_mean_ms', direct: true },
        { id: 'h2_cpu_us_per_req', direct: false },
      ]);
    }
    assertTcpFigures(json.rows);
    assert.match(stdout, /\| metric \| direct \| ssh -L \| svcRouter \| ÷ direct \| ÷ ssh \| goal \| met\? \|/);
    // The subscriber really was attached: it received the records of the small GETs it watched.
    assert.ok(json.rows.find((r) => r.id === 'stream_events')!.tunnel > 0, 'the live-stream subscriber received no records');
    for (const key of ['cpu', 'cores', 'node', 'loadGenerator']) assert.ok(json.machine[key], `machine info lacks ${key}`);
    assert.ok(Number.isFinite(json.load.foreignPercent));
    assert.match(stdout, /\| metric \| direct \| svcRouter \| ratio \| goal \| met\? \|/);
    for (const row of json.rows) assert.ok(stdout.includes(`| ${row.metric} |`), `table lacks "${row.metric}"`);
  });
});

describe('the benchmark in --tcp mode', () => {
  it('runs only the TCP rows, direct, through svc tcp and through ssh -L, and reports each, numeric', async () => {
    const { stdout, json } = await runSmoke(['--tcp', '--tcp-bytes', '256KiB']);
    assert.deepEqual(
      json.rows.map((row) => row.id),
      TCP_FIGURES.map((figure) => figure.id),
    );
    assertTcpFigures(json.rows);
    const tcp = (json as unknown as { results: { tcp: { bytes: number; ssh: Record<string, string> } } }).results.tcp;
    assert.equal(tcp.bytes, 256 * 1024);
    assert.ok(SSH_INSTALLED ? tcp.ssh.cipher : tcp.ssh.skipped, JSON.stringify(tcp.ssh));
    assert.match(stdout, /\| TCP download 256 KiB \(service → client\), MiB\/s \|/);
    for (const row of json.rows) assert.ok(stdout.includes(`| ${row.metric} |`), `table lacks "${row.metric}"`);
    assert.doesNotMatch(stdout, /\| metric \| direct \| svcRouter \| ratio \|/, 'no empty HTTP table');
  });
});

describe('the benchmark in --rules mode', () => {
  it("runs only the rule rows and gives each its difference, with the edge's and the agents' shares, numeric", async () => {
    const { stdout, json } = await runSmoke(['--rules']);
    const ids = ['basic_auth', 'cidr_allow', 'pool_of_two', 'header_rules', 'rate_limit'];
    assert.deepEqual(
      json.rows.map((row) => row.id),
      ids.flatMap((id) => [`${id}_w1_rps`, `${id}_cpu_us_per_req`]),
    );
    for (const row of json.rows) assert.ok(Number.isFinite(row.tunnel) && row.tunnel > 0, `${row.id}: ${row.tunnel}`);
    const results = (
      json as unknown as { results: Record<string, Record<string, { extraUsPerRequest: { edge: number; agents: number } }>> }
    ).results;
    for (const rule of [...Object.values(results.access!), ...Object.values(results.traffic!)]) {
      assert.ok(Number.isFinite(rule.extraUsPerRequest.edge) && Number.isFinite(rule.extraUsPerRequest.agents), JSON.stringify(rule));
    }
    assert.match(stdout, /\| [+-]\d+\.\d µs \(edge [+-]\d+\.\d, agents [+-]\d+\.\d\) \| ≤ \+3 µs \|/);
    for (const row of json.rows) assert.ok(stdout.includes(`| ${row.metric} |`), `table lacks "${row.metric}"`);
    assert.doesNotMatch(stdout, /Small GET \(100 B, 50 conns\)/, 'only the rule rows');
  });
});

describe('the benchmark in --floor mode', () => {
  // Run on the built-in Node load generator: every small-GET figure of the other modes comes from
  // the same load run, so this covers that generator's rate, latency and errors without wrk.
  it('runs direct, svcRouter, the bare relay floor, the floor with HTTP on the edge and a floor with added work in rounds and reports each, numeric, on the Node load generator', async () => {
    const { stdout, json } = await runSmoke(['--floor', '--floor-busy', '5', '--loadgen', 'node']);
    assert.match(String(json.machine.loadGenerator), /Node/);
    const floor = (json as unknown as { floor: FloorJson }).floor;
    assert.deepEqual(
      floor.sides.map((side) => side.key),
      ['direct', 'tunnel', 'floor', 'floor-http', 'floor+5'],
    );
    assert.equal(floor.rounds.length, 1);
    for (const { key } of floor.sides) {
      const run = floor.rounds[0]![key]!;
      assert.ok(run.rps > 0 && Number.isFinite(run.p99Ms), `${key}: ${JSON.stringify(run)}`);
      assert.equal(run.errors, 0, `${key} had errors`);
      assert.ok(run.idlePercent >= 0 && run.idlePercent <= 100, `${key} idle ${run.idlePercent}`);
      // Relay CPU is read from the two processes between visitor and origin, so not for direct.
      if (key === 'direct') assert.equal(run.relayCpuUs, null);
      else assert.ok(run.relayCpuUs!.edge > 0 && run.relayCpuUs!.agent > 0, `${key} relay CPU ${JSON.stringify(run.relayCpuUs)}`);
    }
    for (const side of floor.sides) assert.ok(Number.isFinite(side.ratio) && side.ratio > 0, `${side.key} ratio ${side.ratio}`);
    assert.ok(Number.isFinite(floor.tunnelToFloor) && floor.tunnelToFloor > 0);
    assert.match(stdout, /\| bare relay floor \| \d+ \| [\d.]+× \|/);
    assert.match(stdout, /\| floor with HTTP\/1\.1 on the edge, bytes only on the agent \| \d+ \| [\d.]+× \|/);
    assert.match(stdout, /\| floor \+ 5 µs busy per request in each process \| \d+ \| [\d.]+× \|/);
    assert.match(stdout, /\| svcRouter \| \d+ \| [\d.]+× \([\d.]+× the floor\) \|/);
  });
});

describe('the benchmark in --cluster mode', () => {
  const baseUrl = process.env.SVC_TEST_DATABASE_URL;
  const skip = baseUrl ? false : 'set SVC_TEST_DATABASE_URL (apt-get install postgresql)';
  if (skip && process.env.CI === 'true') {
    it('runs on two nodes', () => assert.fail('SVC_TEST_DATABASE_URL is unset; CI must run the cluster bench'));
    return;
  }
  it('enters the holding node and the other node in alternating pairs and reports both, numeric', { skip }, async () => {
    const database = await freshDatabase(baseUrl!);
    try {
      const { stdout, json } = await runSmoke(['--cluster'], { SVC_BENCH_DATABASE_URL: database.url });
      const cluster = (json as unknown as { cluster: ClusterJson }).cluster;
      assert.ok(cluster.rps.holder > 0 && cluster.rps.entry > 0, JSON.stringify(cluster.rps));
      assert.deepEqual(cluster.errors, { holder: 0, entry: 0 });
      for (const value of [
        cluster.cpuUsPerRequest.holder,
        cluster.cpuUsPerRequest.entry,
        cluster.cpuUsPerRequest.extra,
        cluster.edgeOwnUsPerRequest,
      ]) {
        assert.ok(Number.isFinite(value), JSON.stringify(cluster));
      }
      assert.match(stdout, /\| CPU per request, both nodes \+ agent, µs \| [\d.]+ \| [\d.]+ \| [+-][\d.]+ \|/);
    } finally {
      await database.drop();
    }
  });
});

interface ClusterJson {
  rps: { holder: number; entry: number };
  errors: { holder: number; entry: number };
  cpuUsPerRequest: { holder: number; entry: number; extra: number };
  edgeOwnUsPerRequest: number;
}

interface FloorJson {
  sides: Array<{ key: string; ratio: number }>;
  rounds: Array<
    Record<string, { rps: number; p99Ms: number; errors: number; idlePercent: number; relayCpuUs: { edge: number; agent: number } | null }>
  >;
  tunnelToFloor: number;
}

describe('the benchmark in --stream mode', () => {
  it("runs the pairs asked for and reports each pair's ratio, their geometric mean and interval, and the records, numeric", async () => {
    const { stdout, json } = await runSmoke(['--stream', '4']);
    const result = (json as unknown as { stream: StreamResult }).stream;
    assert.equal(result.pairRatios.length, 4);
    for (const ratio of result.pairRatios) assert.ok(Number.isFinite(ratio) && ratio > 0, `pair ratio ${ratio}`);
    const { mean, low, high } = result.ratioMean;
    assert.ok(low <= mean && mean <= high && low > 0, `geometric mean ${mean} in ${low}–${high}`);
    assert.ok(result.events > 0, 'the subscriber received records');
    assert.equal(result.dropped, 0, 'the subscriber missed no record');
    assert.match(stdout, /geometric mean of the pairs: \*\*\d+\.\d{3}\*\* \(95% interval \d+\.\d{3}–\d+\.\d{3}\)/);
    assert.match(stdout, /\| records received \/ missed \| — \| \d+ \/ 0 \|/);
  });
});

describe('the benchmark in --sessions mode', () => {
  it('opens the sessions over TCP and over TLS and reports every figure of both, numeric', async () => {
    const { stdout, json } = await runSmoke(['--sessions', '20']);
    const { phases } = (json as unknown as { sessions: { phases: Array<Record<string, unknown>> } }).sessions;
    assert.deepEqual(
      phases.map((p) => p.transport),
      ['tcp', 'tls'],
    );
    for (const phase of phases) {
      assert.equal(phase.sessions, 20);
      for (const key of ['bindAllS', 'edgeHeapBytes', 'edgeRssBytes', 'edgeFds', 'agentHeapBytes', 'agentRssBytes']) {
        assert.ok(Number.isFinite(phase[key]), `${String(phase.transport)} ${key}: ${String(phase[key])}`);
      }
      for (const window of ['idle', 'active'] as const) {
        const cpu = phase[window] as Record<string, number>;
        for (const key of ['seconds', 'edgePercent', 'edgeUsPerSessionS', 'agentPercent', 'agentUsPerSessionS']) {
          assert.ok(Number.isFinite(cpu[key]), `${String(phase.transport)} ${window} ${key}: ${cpu[key]}`);
        }
      }
      const active = phase.active as { requests: number; ok: number };
      assert.equal(active.ok, active.requests, 'every request through a quiet session was answered');
    }
    assert.match(stdout, /^\| tcp \| 20 \|/m);
    assert.match(stdout, /^\| tls \| 20 \|/m);
  });
});

interface StreamResult {
  pairRatios: number[];
  ratioMean: { mean: number; low: number; high: number };
  events: number;
  dropped: number;
}

describe('the benchmark options', () => {
  it('--heartbeat-ms sets the edge heartbeat of --sessions, 1000 to 60000, and needs --sessions', async () => {
    const { parseOptions } = (await import(path.join(REPO_ROOT, 'bench/dist/options.js'))) as {
      parseOptions(argv: string[]): { heartbeatMs: number | undefined };
    };
    assert.equal(parseOptions(['--sessions', '100', '--heartbeat-ms', '20000']).heartbeatMs, 20000);
    assert.equal(parseOptions(['--sessions']).heartbeatMs, undefined);
    assert.throws(() => parseOptions(['--sessions', '--heartbeat-ms', '500']), /--heartbeat-ms takes 1000 to 60000, not "500"/);
    assert.throws(() => parseOptions(['--heartbeat-ms', '20000']), /--heartbeat-ms needs --sessions/);
  });

  it('--help prints the usage and exits 0; an unknown argument exits 2 with the usage and no stack', () => {
    const bench = path.join(REPO_ROOT, 'bench/dist/bench.js');
    const help = spawnSync(process.execPath, [bench, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^Usage: node --expose-gc bench\/dist\/bench\.js/);
    const wrong = spawnSync(process.execPath, [bench, '--bogus'], { encoding: 'utf8' });
    assert.equal(wrong.status, 2);
    assert.match(wrong.stderr, /^unknown argument --bogus\nUsage: /);
    assert.doesNotMatch(wrong.stderr, /\n\s+at /);
  });

  it('--cpu-prof-workload picks what runs under the profiler, small-get by default, and refuses others', async () => {
    const { parseOptions } = (await import(path.join(REPO_ROOT, 'bench/dist/options.js'))) as {
      parseOptions(argv: string[]): { cpuProfWorkload: string };
    };
    assert.equal(parseOptions(['--cpu-prof', '/tmp/p']).cpuProfWorkload, 'small-get');
    assert.equal(parseOptions(['--cpu-prof', '/tmp/p', '--cpu-prof-workload', 'download']).cpuProfWorkload, 'download');
    assert.equal(parseOptions(['--cpu-prof-workload', 'upload']).cpuProfWorkload, 'upload');
    assert.throws(
      () => parseOptions(['--cpu-prof-workload', 'sse']),
      /--cpu-prof-workload must be one of small-get, small-get-stream, small-get-basic-auth, download, upload/,
    );
    assert.throws(() => parseOptions(['--cpu-prof-workload']), /needs a value/);
  });

  it('--floor is its own mode with its own results file, and does not combine with --cpu-prof', async () => {
    const { parseOptions } = (await import(path.join(REPO_ROOT, 'bench/dist/options.js'))) as {
      parseOptions(argv: string[]): { floor: boolean; jsonPath: string };
    };
    assert.equal(parseOptions([]).floor, false);
    assert.match(parseOptions([]).jsonPath, /bench\/results\/latest\.json$/);
    assert.equal(parseOptions(['--floor']).floor, true);
    assert.match(parseOptions(['--floor']).jsonPath, /bench\/results\/floor\.json$/);
    assert.equal(parseOptions(['--floor', '--json', '/tmp/f.json']).jsonPath, '/tmp/f.json');
    assert.throws(() => parseOptions(['--floor', '--cpu-prof', '/tmp/p']), /separate modes/);
  });

  it('--stream is its own mode with its own results file, and takes an even number of pairs', async () => {
    const { parseOptions } = (await import(path.join(REPO_ROOT, 'bench/dist/options.js'))) as {
      parseOptions(argv: string[]): { streamPairs: number | undefined; jsonPath: string };
    };
    assert.equal(parseOptions([]).streamPairs, undefined);
    assert.equal(parseOptions(['--stream', '40']).streamPairs, 40);
    assert.match(parseOptions(['--stream', '2']).jsonPath, /bench\/results\/stream\.json$/);
    for (const bad of ['0', '3', '-2', '2.5', 'x', '1002']) {
      assert.throws(() => parseOptions(['--stream', bad]), /an even number of pairs from 2 to 1000/, bad);
    }
    assert.throws(() => parseOptions(['--stream']), /needs a value/);
    assert.throws(() => parseOptions(['--stream', '4', '--floor']), /separate modes/);
  });

  it('--sessions takes a count (default 10,000, 40 in --smoke) and its own results file', async () => {
    const { parseOptions } = (await import(path.join(REPO_ROOT, 'bench/dist/options.js'))) as {
      parseOptions(argv: string[]): { sessions: number | undefined; jsonPath: string };
    };
    assert.equal(parseOptions([]).sessions, undefined);
    assert.equal(parseOptions(['--sessions']).sessions, 10_000);
    assert.equal(parseOptions(['--smoke', '--sessions']).sessions, 40);
    assert.equal(parseOptions(['--sessions', '300']).sessions, 300);
    assert.match(parseOptions(['--sessions', '300']).jsonPath, /bench\/results\/sessions\.json$/);
    for (const bad of ['0', '2.5', '50001']) assert.throws(() => parseOptions(['--sessions', bad]), /whole number from 1 to 50000/, bad);
    assert.throws(() => parseOptions(['--sessions', '5', '--stream', '2']), /separate modes/);
  });

  it('--tcp is its own mode with its own results file; --tcp-bytes and --tcp-deadline size and bound its runs', async () => {
    const { parseOptions } = (await import(path.join(REPO_ROOT, 'bench/dist/options.js'))) as {
      parseOptions(argv: string[]): { tcp: boolean; jsonPath: string; tcpDeadlineS: number | undefined; sizes: { tcpBytes: number } };
    };
    assert.equal(parseOptions([]).tcp, false);
    assert.equal(parseOptions([]).sizes.tcpBytes, 1024 ** 3);
    assert.equal(parseOptions(['--quick']).sizes.tcpBytes, 256 * 1024 ** 2);
    assert.equal(parseOptions(['--tcp']).tcp, true);
    assert.match(parseOptions(['--tcp']).jsonPath, /bench\/results\/tcp\.json$/);
    assert.equal(parseOptions(['--tcp', '--tcp-bytes', '64MiB']).sizes.tcpBytes, 64 * 1024 ** 2);
    assert.equal(parseOptions(['--tcp-deadline', '90']).tcpDeadlineS, 90);
    assert.throws(() => parseOptions(['--tcp-deadline', '0']), /--tcp-deadline takes whole seconds from 1 to 3600, not "0"/);
    assert.throws(
      () => parseOptions(['--tcp-bytes', 'lots']),
      /--tcp-bytes takes a size from 1 byte to 64GiB such as 256MiB or 1GiB, not "lots"/,
    );
    assert.throws(() => parseOptions(['--tcp', '--floor']), /separate modes/);
  });

  it('--rules is its own mode with its own results file', async () => {
    const { parseOptions } = (await import(path.join(REPO_ROOT, 'bench/dist/options.js'))) as {
      parseOptions(argv: string[]): { rules: boolean; jsonPath: string };
    };
    assert.equal(parseOptions([]).rules, false);
    assert.equal(parseOptions(['--rules']).rules, true);
    assert.match(parseOptions(['--rules']).jsonPath, /bench\/results\/rules\.json$/);
    assert.throws(() => parseOptions(['--rules', '--tcp']), /separate modes/);
  });

  it('--floor-busy lists the stand-in work of extra floor sides, 4 and 8 µs by default', async () => {
    const { parseOptions } = (await import(path.join(REPO_ROOT, 'bench/dist/options.js'))) as {
      parseOptions(argv: string[]): { floorBusyUs: number[] };
    };
    assert.deepEqual(parseOptions(['--floor']).floorBusyUs, [4, 8]);
    assert.deepEqual(parseOptions(['--floor', '--floor-busy', '2,6,10']).floorBusyUs, [2, 6, 10]);
    assert.deepEqual(parseOptions(['--floor', '--floor-busy', 'none']).floorBusyUs, []);
    for (const bad of ['0', '-3', '2.5', 'x', '4,', '1001']) {
      assert.throws(() => parseOptions(['--floor', '--floor-busy', bad]), /whole microseconds from 1 to 1000/, bad);
    }
    assert.throws(() => parseOptions(['--floor-busy', '4']), /--floor-busy needs --floor/);
  });
});
