import { execFile } from 'node:child_process';
import http2 from 'node:http2';
import tls from 'node:tls';
import { checkUpload, pumpBody } from './body-pump.js';
import { TUNNEL_HOST } from './system.js';

// Clients of the HTTP/2 rows. Both sides (the edge's dev-CA certificate, the HTTP/2 origin's
// self-signed one) are on loopback under the benchmark's control: certificates are not verified.

/** PUT /upload of `bytes` over HTTP/2 with TLS on a fresh session (Node's http2 client); resolves with the seconds taken. */
export function h2Upload(port: number, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const session = http2.connect(`https://${TUNNEL_HOST}:${port}`, {
      createConnection: () =>
        tls.connect({ host: '127.0.0.1', port, servername: TUNNEL_HOST, rejectUnauthorized: false, ALPNProtocols: ['h2'] }),
    });
    session.on('error', reject);
    const stream = session.request({
      ':method': 'PUT',
      ':path': '/upload',
      ':authority': TUNNEL_HOST,
      'content-length': String(bytes),
    });
    let status = 0;
    let body = '';
    stream.setEncoding('utf8');
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('end', () => {
      session.close();
      const error = checkUpload(status, body, bytes);
      if (error) reject(error);
      else resolve((performance.now() - started) / 1000);
    });
    stream.on('error', reject);
    pumpBody(stream, bytes);
  });
}

/** Seconds without any event after which h2load closes a connection. */
const H2LOAD_IDLE_S = 5;

/** One h2load run. h2load reports no percentiles: the mean request time stands in. */
export interface H2LoadResult {
  requests: number;
  rps: number;
  meanMs: number;
  /** Failed requests (errored or timed out) and 4xx/5xx answers. */
  errors: number;
}

/**
 * GET https://x.localhost:<port>/small with h2load (Debian `nghttp2-client`): one thread,
 * `connections` sessions of one stream at a time each, as wrk's keep-alive connections in W1.
 */
export async function runH2load(port: number, connections: number, durationS: number): Promise<H2LoadResult> {
  try {
    return await h2loadOnce(port, connections, durationS);
  } catch (error) {
    // h2load 1.52 was seen to die without a report on a machine loaded ~10× over its cores
    // (sessions still in their TLS handshake when the duration ended): one more try, then fail.
    process.stderr.write(`  h2load failed (${String((error as Error).message).split('\n')[0]}); trying once more\n`);
    return h2loadOnce(port, connections, durationS);
  }
}

function h2loadOnce(port: number, connections: number, durationS: number): Promise<H2LoadResult> {
  // -N: on a loaded machine h2load 1.52 in duration mode was seen to wait for ever on a few
  // connections that never saw a response; an idle connection is closed (and counted) instead.
  const args = [
    '-t1',
    `-c${connections}`,
    '-m1',
    `-D${durationS}`,
    // Sessions are set up (TLS handshakes) before the measured time starts.
    '--warm-up-time=1',
    `-N${H2LOAD_IDLE_S}`,
    `--connect-to=127.0.0.1:${port}`,
    `https://${TUNNEL_HOST}:${port}/small`,
  ];
  return new Promise((resolve, reject) => {
    const timeout = (1 + durationS + 2 * H2LOAD_IDLE_S + 30) * 1000;
    execFile('h2load', args, { encoding: 'utf8', timeout, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`h2load failed (exit ${error.code ?? error.signal}): ${error.message}\n${stdout}${stderr}`));
      try {
        resolve(parseH2load(stdout));
      } catch (parseError) {
        reject(parseError as Error);
      }
    });
  });
}

/** Parses h2load's text report. */
export function parseH2load(out: string): H2LoadResult {
  const rps = out.match(/finished in [\d.]+m?s, ([\d.]+) req\/s/);
  const requests = out.match(/requests: \d+ total, \d+ started, (\d+) done, \d+ succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/);
  const status = out.match(/status codes: \d+ 2xx, \d+ 3xx, (\d+) 4xx, (\d+) 5xx/);
  const time = out.match(/time for request:\s+[\d.]+[mu]?s\s+[\d.]+[mu]?s\s+([\d.]+)(us|ms|s)/);
  if (!rps || !requests || !status || !time) throw new Error(`unexpected h2load output:\n${out}`);
  // A failed request is also counted as errored or timed out, and answers are counted apart.
  return {
    requests: Number(requests[1]),
    rps: Number(rps[1]),
    meanMs: Number(time[1]) * (time[2] === 'us' ? 0.001 : time[2] === 's' ? 1000 : 1),
    errors: Number(requests[2]) + Number(status[1]) + Number(status[2]),
  };
}

/** Whether h2load is installed; the HTTP/2 small GET is skipped without it. */
export function h2loadAvailable(): Promise<boolean> {
  return new Promise((resolve) => execFile('h2load', ['--version'], (error) => resolve(!error)));
}
