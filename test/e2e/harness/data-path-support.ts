// Helpers shared by the data-path e2e tests (streaming, WebSocket, abort storm): visitors that
// stream instead of buffering, and memory readings of the edge and agent processes.
import { createHash } from 'node:crypto';
import { once, type EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import tls from 'node:tls';
import { edgeUrl, loopbackLookup, type TestServer } from './index.js';

type Edge = Pick<TestServer, 'httpPort' | 'httpsPort' | 'caPem'>;

export const MiB = 1024 * 1024;

/** Resident set size of a process in bytes, read from /proc/<pid>/status (Linux). */
export function rssBytes(pid: number): number {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)\s+kB$/m);
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/** CPU time (user + system) a process has used so far, in milliseconds, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  // Fields after the command name: state is 3rd, utime 14th and stime 15th of the whole line.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks: 100 per second on Linux
}

/** Watches how far the RSS of some processes grows above a baseline taken at construction. */
export class RssWatch {
  private readonly baseline = new Map<string, number>();
  /** Largest growth seen per process, in bytes. */
  readonly peakGrowth = new Map<string, number>();
  private nextSampleAt = 0;

  constructor(
    private readonly pids: Record<string, number>,
    private readonly everyBytes = 128 * MiB,
  ) {
    for (const [name, pid] of Object.entries(pids)) {
      this.baseline.set(name, rssBytes(pid));
      this.peakGrowth.set(name, 0);
    }
  }

  /** Samples every process now. */
  sample(): void {
    for (const [name, pid] of Object.entries(this.pids)) {
      const growth = rssBytes(pid) - this.baseline.get(name)!;
      if (growth > this.peakGrowth.get(name)!) this.peakGrowth.set(name, growth);
    }
  }

  /** Samples each time `bytes` of progress crosses another `everyBytes` step. */
  progress(bytes: number): void {
    if (bytes < this.nextSampleAt) return;
    this.nextSampleAt = bytes + this.everyBytes;
    this.sample();
  }

  /** Peak growth per process, for test diagnostics. */
  describe(): string {
    return [...this.peakGrowth].map(([name, growth]) => `${name} +${(growth / MiB).toFixed(1)} MiB`).join(', ');
  }

  /** Names and peak growth (MiB) of processes that grew by `limit` bytes or more; empty when all stayed below. */
  over(limit: number): string[] {
    return [...this.peakGrowth]
      .filter(([, growth]) => growth >= limit)
      .map(([name, growth]) => `${name} +${(growth / MiB).toFixed(0)} MiB`);
  }
}

/** The edge's count of streams open on agent sessions (the `svc_streams_open` gauge of GET /metrics). */
export async function openStreams(server: Pick<TestServer, 'url'>): Promise<number> {
  const text = await fetch(`${server.url}/metrics`).then((response) => response.text());
  const match = text.match(/^svc_streams_open (\d+)$/m);
  if (!match) throw new Error('GET /metrics has no svc_streams_open gauge');
  return Number(match[1]);
}

/** Sends a request through the edge over HTTP/1.1 and resolves with the response head; the body is left unread. */
export function request(
  edge: Edge,
  hostname: string,
  path: string,
  options: { method?: string; headers?: http.OutgoingHttpHeaders; body?: (req: http.ClientRequest) => void } = {},
): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(edgeUrl(edge, hostname, path), {
      method: options.method ?? 'GET',
      headers: options.headers,
      lookup: loopbackLookup,
      agent: false,
    });
    let responded = false;
    req.once('response', (res) => {
      responded = true;
      resolve(res);
    });
    // After the head, failures belong to whoever reads the body (or stops sending one, EPIPE).
    req.on('error', (error) => {
      if (!responded) reject(error);
    });
    if (options.body) options.body(req);
    else req.end();
  });
}

/** Reads a body to its end, hashing as it goes (never buffering it); `onBytes` sees the running count. */
export async function hashBody(
  body: NodeJS.ReadableStream,
  onBytes?: (total: number) => void,
): Promise<{ sha256: string; length: number }> {
  const hash = createHash('sha256');
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    hash.update(chunk);
    length += chunk.length;
    onBytes?.(length);
  }
  return { sha256: hash.digest('hex'), length };
}

/** Reads a whole (small) body as text. */
export async function readText(body: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of body as AsyncIterable<Buffer>) text += chunk.toString('utf8');
  return text;
}

/** Writes `count` chunks from `chunkAt` to a writable, waiting for 'drain' whenever it asks to. */
export async function writeChunks(
  out: NodeJS.WritableStream & EventEmitter,
  count: number,
  chunkAt: (index: number) => Buffer,
): Promise<void> {
  for (let index = 0; index < count; index++) {
    if (!out.write(chunkAt(index))) await once(out, 'drain');
  }
}

/** Opens an HTTP/2 session to the edge's TLS port for `hostname` (SNI and :authority), checking ALPN picked h2. */
export async function connectH2(edge: Edge, hostname: string): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(`https://${hostname}:${edge.httpsPort}`, {
    createConnection: () =>
      tls.connect({ host: '127.0.0.1', port: edge.httpsPort, servername: hostname, ca: edge.caPem, ALPNProtocols: ['h2'] }),
  });
  await once(session, 'connect');
  return session;
}

/** Sends one HTTP/2 request and reads the answer whole. */
export async function h2Request(
  session: http2.ClientHttp2Session,
  headers: http2.OutgoingHttpHeaders,
  body?: string | Buffer,
): Promise<{ headers: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader; text: string }> {
  const stream = session.request(headers, { endStream: body === undefined });
  if (body !== undefined) stream.end(body);
  const [responseHeaders] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader];
  return { headers: responseHeaders, text: await readText(stream) };
}
