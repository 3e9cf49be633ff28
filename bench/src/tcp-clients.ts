import net, { type Socket } from 'node:net';
import { percentile } from './stats.js';
import { TCP_DOWNLOAD, TCP_ECHO, TCP_UPLOAD } from './tcp-origin.js';

// The clients of the TCP rows, against tcp-origin.ts directly, through `svc tcp` or through
// `ssh -L`: each is one run with a deadline, so a side that stalls fails the benchmark with a
// sentence naming it instead of hanging it.

/** A run that did not finish in time: its message names the run and how far it got. */
export class DeadlineError extends Error {
  override name = 'DeadlineError';
}

/** One run's name (`download through ssh -L`) and how long it may take. */
export interface Deadline {
  label: string;
  ms: number;
}

/**
 * Settles with `work`, or rejects with a DeadlineError after `deadline.ms`; `expire` then stops
 * the run (destroys its sockets) and says how far it got.
 */
export function withDeadline<T>(deadline: Deadline, work: Promise<T>, expire: () => string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      const progress = expire();
      const seconds = deadline.ms < 10_000 ? (deadline.ms / 1000).toFixed(1) : (deadline.ms / 1000).toFixed(0);
      reject(new DeadlineError(`${deadline.label} did not finish within ${seconds} s (${progress})`));
    }, deadline.ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(new Error(`${deadline.label}: ${error instanceof Error ? error.message : String(error)}`));
      },
    );
  });
}

const MIB = 1024 * 1024;

/** A byte count as a progress report shows it. */
function size(bytes: number): string {
  return bytes >= MIB ? `${(bytes / MIB).toFixed(0)} MiB` : `${bytes} B`;
}
/** What an upload writes at a time. */
const UPLOAD_CHUNK = Buffer.alloc(256 * 1024, 0x75);

function connect(port: number): Socket {
  const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true, noDelay: true });
  return socket;
}

/** Asks for `bytes` and reads them to the end, keeping nothing; resolves with the seconds taken. */
export function tcpDownload(port: number, bytes: number, deadline: Deadline): Promise<number> {
  const socket = connect(port);
  let received = 0;
  const work = new Promise<number>((resolve, reject) => {
    const started = performance.now();
    const ask = Buffer.alloc(9);
    ask[0] = TCP_DOWNLOAD;
    ask.writeBigUInt64BE(BigInt(bytes), 1);
    socket.once('connect', () => socket.write(ask));
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.once('end', () => {
      socket.end();
      if (received !== bytes) reject(new Error(`received ${received} of ${bytes} bytes`));
      else resolve((performance.now() - started) / 1000);
    });
    socket.once('error', reject);
  });
  return withDeadline(deadline, work, () => {
    socket.destroy();
    return `${size(received)} of ${size(bytes)} received`;
  });
}

/** Sends `bytes` with backpressure and waits for the service's count; resolves with the seconds taken. */
export function tcpUpload(port: number, bytes: number, deadline: Deadline): Promise<number> {
  const socket = connect(port);
  let sent = 0;
  const work = new Promise<number>((resolve, reject) => {
    const started = performance.now();
    const pump = (): void => {
      while (sent < bytes) {
        const chunk = bytes - sent >= UPLOAD_CHUNK.length ? UPLOAD_CHUNK : UPLOAD_CHUNK.subarray(0, bytes - sent);
        sent += chunk.length;
        if (!socket.write(chunk)) {
          socket.once('drain', pump);
          return;
        }
      }
      socket.end();
    };
    socket.once('connect', () => {
      socket.write(Buffer.of(TCP_UPLOAD));
      pump();
    });
    const answer: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => answer.push(chunk));
    socket.once('end', () => {
      const count = Buffer.concat(answer);
      const counted = count.length === 8 ? Number(count.readBigUInt64BE()) : -1;
      if (counted !== bytes) reject(new Error(`the service counted ${counted} of ${bytes} bytes`));
      else resolve((performance.now() - started) / 1000);
    });
    socket.once('error', reject);
  });
  return withDeadline(deadline, work, () => {
    socket.destroy();
    return `${size(sent)} of ${size(bytes)} sent`;
  });
}

/** One short connection: connect, one byte each way, close (the client ends first, then waits for the close). */
function shortConnection(port: number, open: Set<Socket>): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port);
    open.add(socket);
    socket.once('connect', () => socket.write(Buffer.of(TCP_ECHO)));
    socket.once('data', () => socket.end());
    socket.once('error', reject);
    socket.once('close', (hadError) => {
      open.delete(socket);
      if (!hadError) resolve();
    });
  });
}

/** `count` short connections, at most `concurrency` at once; resolves with connections per second. */
export function tcpConnections(port: number, count: number, concurrency: number, deadline: Deadline): Promise<number> {
  const open = new Set<Socket>();
  let done = 0;
  let failed = false;
  const work = new Promise<number>((resolve, reject) => {
    const started = performance.now();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < count && !failed) {
        next++;
        await shortConnection(port, open);
        done++;
      }
    };
    Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane)).then(
      () => resolve(count / ((performance.now() - started) / 1000)),
      (error: unknown) => {
        failed = true;
        for (const socket of open) socket.destroy();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
  return withDeadline(deadline, work, () => {
    failed = true;
    for (const socket of open) socket.destroy();
    return `${done} of ${count} connections done`;
  });
}

/** Round trips of one byte on one connection: `warmup` unrecorded, then `trips`; median and p99 in ms. */
export function tcpEcho(port: number, trips: number, warmup: number, deadline: Deadline): Promise<{ median: number; p99: number }> {
  const socket = connect(port);
  const rtts: number[] = [];
  const work = new Promise<{ median: number; p99: number }>((resolve, reject) => {
    const ping = Buffer.of(TCP_ECHO);
    let sentAt = 0;
    let trip = 0;
    const send = (): void => {
      sentAt = performance.now();
      socket.write(ping);
    };
    socket.once('connect', send);
    socket.on('data', (chunk: Buffer) => {
      // One byte out, one byte back: a chunk is one answer (never two: the next ping waits for it).
      if (chunk.length !== 1) return reject(new Error(`echo answered ${chunk.length} bytes to one`));
      if (trip++ >= warmup) rtts.push(performance.now() - sentAt);
      if (trip < warmup + trips) return send();
      socket.end();
      resolve({ median: percentile(rtts, 50), p99: percentile(rtts, 99) });
    });
    socket.once('error', reject);
  });
  return withDeadline(deadline, work, () => {
    socket.destroy();
    return `${rtts.length} of ${trips} round trips done`;
  });
}
