import { execFile, execFileSync } from 'node:child_process';
import http from 'node:http';
import { percentile } from './stats.js';

/** Result of one closed-loop load run. */
export interface LoadResult {
  requests: number;
  durationS: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors, timeouts and non-2xx/3xx answers. */
  errors: number;
}

/** One load run: GET `http://127.0.0.1:<port><path>` with `Host: <host>` over `connections` keep-alive connections. */
export interface LoadSpec {
  port: number;
  path: string;
  host: string;
  connections: number;
  durationS: number;
  /** Extra request headers (an Authorization for a tunnel behind basic auth). */
  headers?: Record<string, string>;
}

export type LoadGenerator = 'wrk' | 'node';

/** Whether wrk is on the PATH (Debian package `wrk`). */
export function wrkInstalled(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk --version exits 1 after printing its banner; only a missing binary means "absent".
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** wrk when it is on the PATH, else the built-in Node generator. */
export function pickLoadGenerator(preferred?: string): LoadGenerator {
  if (preferred === 'node') return 'node';
  if (wrkInstalled()) return 'wrk';
  if (preferred === 'wrk') throw new Error('wrk was asked for but is not installed (apt-get install -y wrk)');
  return 'node';
}

/** Runs the load with the chosen generator. */
export function runLoad(generator: LoadGenerator, spec: LoadSpec): Promise<LoadResult> {
  return generator === 'wrk' ? runWrk(spec) : runNodeLoad(spec);
}

/** One wrk run, its report parsed. */
function runWrk(spec: LoadSpec): Promise<LoadResult> {
  return execWrk(spec).then(parseWrk);
}

/**
 * Runs wrk (1 thread, `connections` connections, with the latency distribution, plus `extra`
 * options) against the spec's URL and resolves with its report; rejects with the output if it fails.
 */
export function execWrk(spec: LoadSpec, extra: readonly string[] = []): Promise<string> {
  const args = [
    '-t1',
    `-c${spec.connections}`,
    `-d${spec.durationS}s`,
    '--latency',
    ...extra,
    '-H',
    `Host: ${spec.host}`,
    ...Object.entries(spec.headers ?? {}).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
    `http://127.0.0.1:${spec.port}${spec.path}`,
  ];
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`wrk failed: ${error.message}\n${stdout}${stderr}`));
      resolve(stdout);
    });
  });
}

/** Parses wrk's text report. */
export function parseWrk(out: string): LoadResult {
  const total = out.match(/(\d+) requests in ([\d.]+)(us|ms|s|m)/);
  const rps = out.match(/Requests\/sec:\s+([\d.]+)/);
  const p50 = out.match(/^\s+50%\s+([\d.]+)(us|ms|s|m)\s*$/m);
  const p99 = out.match(/^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$/m);
  if (!total || !rps || !p50 || !p99) throw new Error(`unexpected wrk output:\n${out}`);
  const socket = out.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const non2xx = out.match(/Non-2xx or 3xx responses: (\d+)/);
  const errors = (socket ? socket.slice(1, 5).reduce((sum, n) => sum + Number(n), 0) : 0) + (non2xx ? Number(non2xx[1]) : 0);
  return {
    requests: Number(total[1]),
    durationS: toMs(total[2]!, total[3]!) / 1000,
    rps: Number(rps[1]),
    p50Ms: toMs(p50[1]!, p50[2]!),
    p99Ms: toMs(p99[1]!, p99[2]!),
    errors,
  };
}

function toMs(value: string, unit: string): number {
  const factor = unit === 'us' ? 0.001 : unit === 'ms' ? 1 : unit === 's' ? 1000 : 60_000;
  return Number(value) * factor;
}

/**
 * The fallback generator: `connections` closed loops in this process over an http.Agent with
 * keep-alive and exactly that many sockets. It shares this process's one core, so it saturates
 * earlier than wrk; the report names the generator used.
 */
async function runNodeLoad(spec: LoadSpec): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections, maxFreeSockets: spec.connections });
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + spec.durationS * 1000;
  const once = (): Promise<void> =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const req = http.get(
        { host: '127.0.0.1', port: spec.port, path: spec.path, headers: { ...spec.headers, host: spec.host }, agent },
        (res) => {
          res.on('data', () => undefined);
          res.on('end', () => {
            if ((res.statusCode ?? 0) >= 400) errors++;
            latencies.push(performance.now() - t0);
            resolve();
          });
          res.on('error', () => {
            errors++;
            resolve();
          });
        },
      );
      req.setTimeout(2000, () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        errors++;
        resolve();
      });
    });
  const loop = async (): Promise<void> => {
    while (performance.now() < deadline) await once();
  };
  await Promise.all(Array.from({ length: spec.connections }, loop));
  const durationS = (performance.now() - started) / 1000;
  agent.destroy();
  return {
    requests: latencies.length,
    durationS,
    rps: latencies.length / durationS,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    errors,
  };
}
