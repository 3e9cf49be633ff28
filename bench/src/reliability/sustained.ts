/**
 * A sustained run of small GETs through one tunnel: `node --expose-gc
 * bench/dist/reliability/sustained.js [--seconds=600] [--connections=50] [--delayMs=0] [--timeoutS=2]`.
 * wrk (1 thread) with a counting script: with `--delayMs=0` each connection sends its next
 * request as soon as the answer came (closed loop: the highest rate edge and agent sustain on
 * this machine); with a delay, each waits that long first, which caps the rate below it.
 * Every 30 s it prints the rate, p99, the errors by kind (connect, read, write, timeout,
 * status code), the machine's load average, lines the agent and the server wrote to stderr
 * (a lost session, a logged fault) and the RSS of edge and agent; at the end, the drift from
 * the first sample (after a 20 s warm-up) to the last.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { pickLoadGenerator } from '../loadgen.js';
import { vmRssBytes } from '../proc.js';
import { startSystem, TUNNEL_HOST } from '../system.js';
import { checkArgs, conditions, flag, MIB } from './common.js';
import { describeKinds, runClassified, type ErrorKinds } from './wrk-classified.js';

const USAGE = `Usage: node --expose-gc bench/dist/reliability/sustained.js [--seconds=600] [--connections=50] [--delayMs=0] [--timeoutS=2]
  --seconds      measured time after a 20 s warm-up, in 30 s windows (default 600)
  --connections  wrk connections (default 50)
  --delayMs      pause of each connection between answer and next request (default 0: as fast as answered)
  --timeoutS     wrk's timeout for one answer (default 2, wrk's own)
Needs wrk (Debian package wrk).`;
checkArgs(USAGE, ['seconds', 'connections', 'delayMs', 'timeoutS']);
const seconds = flag('seconds', 600);
const connections = flag('connections', 50);
const delayMs = flag('delayMs', 0);
const timeoutS = flag('timeoutS', 2);
if (pickLoadGenerator() !== 'wrk') {
  process.stderr.write(`wrk is not installed (apt-get install -y wrk): it tells the errors apart\n${USAGE}\n`);
  process.exit(2);
}

/** Counts the lines a process writes to stderr, and keeps the last one. */
function stderrWatch(stream: NodeJS.ReadableStream | null): { take(): { lines: number; last: string } } {
  let lines = 0;
  let last = '';
  stream?.on('data', (chunk: Buffer | string) => {
    const text = chunk.toString().trim();
    if (text === '') return;
    lines += text.split('\n').length;
    last = text.split('\n').pop()!;
  });
  return {
    take() {
      const out = { lines, last };
      lines = 0;
      return out;
    },
  };
}

const load1 = (): string => os.loadavg()[0]!.toFixed(2);
console.log(`machine: ${conditions()}; wrk, ${connections} connections, delay ${delayMs} ms, timeout ${timeoutS} s`);
const system = await startSystem();
const agentErr = stderrWatch(system.agent.child.stderr);
const serverErr = stderrWatch(system.server.child.stderr);
const scriptDir = await mkdtemp(`${os.tmpdir()}/svc-sustained-`);
try {
  const load = (durationS: number) =>
    runClassified({ port: system.httpPort, path: '/small', host: TUNNEL_HOST, connections, durationS, delayMs, timeoutS, scriptDir });
  const warm = await load(20);
  console.log(`warm-up 20 s: ${warm.rps.toFixed(0)} req/s, errors: ${describeKinds(warm.kinds)}`);
  agentErr.take();
  serverErr.take();
  const rss = (): [number, number] => [vmRssBytes(system.server.pid) / MIB, vmRssBytes(system.agent.pid) / MIB];
  const first = rss();
  console.log(`start: edge RSS ${first[0].toFixed(1)} MiB, agent RSS ${first[1].toFixed(1)} MiB`);
  let requests = 0;
  let errors = 0;
  const total: ErrorKinds = { connect: 0, read: 0, write: 0, timeout: 0, status: {} };
  const p99s: number[] = [];
  const loads: number[] = [];
  const peak = [...first];
  for (let done = 0; done < seconds; done += 30) {
    const step = Math.min(30, seconds - done);
    const r = await load(step);
    requests += r.requests;
    errors += r.errors;
    p99s.push(r.p99Ms);
    loads.push(os.loadavg()[0]!);
    for (const key of ['connect', 'read', 'write', 'timeout'] as const) total[key] += r.kinds[key];
    for (const [code, n] of Object.entries(r.kinds.status)) total.status[code] = (total.status[code] ?? 0) + n;
    const [edge, agent] = rss();
    peak[0] = Math.max(peak[0]!, edge);
    peak[1] = Math.max(peak[1]!, agent);
    const a = agentErr.take();
    const s = serverErr.take();
    const stderrNote = [
      a.lines > 0 ? `agent stderr ${a.lines} lines, last: ${a.last}` : '',
      s.lines > 0 ? `server stderr ${s.lines} lines, last: ${s.last}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    console.log(
      `t=${done + step} s: ${r.rps.toFixed(0)} req/s, p99 ${r.p99Ms.toFixed(1)} ms, errors: ${describeKinds(r.kinds)}; load ${load1()}; edge RSS ${edge.toFixed(1)} MiB, agent RSS ${agent.toFixed(1)} MiB${stderrNote ? `; ${stderrNote}` : ''}`,
    );
  }
  const last = rss();
  console.log(
    `total: ${requests} requests in ${seconds} s (${(requests / seconds).toFixed(0)} req/s), ${errors} errors (${describeKinds(total)}); ` +
      `p99 per window ${Math.min(...p99s).toFixed(1)}–${Math.max(...p99s).toFixed(1)} ms; load average (1 min) ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`,
  );
  console.log(
    `RSS drift: edge ${first[0].toFixed(1)} → ${last[0].toFixed(1)} MiB (${(last[0] - first[0]).toFixed(1)}, peak ${peak[0]!.toFixed(1)}), agent ${first[1].toFixed(1)} → ${last[1].toFixed(1)} MiB (${(last[1] - first[1]).toFixed(1)}, peak ${peak[1]!.toFixed(1)})`,
  );
} finally {
  await system.close();
  await rm(scriptDir, { recursive: true, force: true });
}
