import { Worker } from 'node:worker_threads';
import type { NewRequestRecord, RequestBatchWriter } from './request-records.js';
import { newIdParts, packRecords } from './request-rows.js';
import type { RequestWriterCommand, RequestWriterReply, RequestWriterThreadData } from './request-writer-thread.js';

/**
 * Earliest restart of a thread that died, counted from its start: a thread that cannot start
 * (say, the file became unreadable) is retried once a second rather than at every 20 ms flush.
 */
const RESTART_INTERVAL_MS = 1000;

export interface SqliteRequestWriterOptions extends RequestWriterThreadData {
  /** Monotonic clock in ms, for the restart interval. Default performance.now. */
  now?: () => number;
}

interface Pending {
  resolve(): void;
  reject(error: Error): void;
}

/**
 * The main thread's side of the inspector's SQLite writer thread (request-writer-thread.ts):
 * `write` posts a batch (packed: request-rows.ts, PackedBatch, with the
 * ids drawn for it) and resolves once the thread
 * has committed it, or rejects with the SQLite error after the thread rolled the whole batch
 * back. The thread answers in order, so batches commit in the order `write` was called.
 *
 * The thread starts with the first batch, not with the store: a store that never writes
 * inspector records (`svc-server account ...`, most tests) pays no thread start (measured: the
 * first batch, thread start included, ~60 ms of CPU from dist/, of which <1 ms blocks the main
 * thread; ~200 ms through tsx).
 *
 * When the thread dies unexpectedly, the batches it had not answered reject (each one either
 * committed whole or not at all; almost always not, as COMMIT is immediately followed by the
 * answer) and the next `write` starts a new thread. Restarting rather than failing for
 * good: the inspector is a best-effort side channel, and a lost thread (a crash, an out-of-
 * memory kill of its heap) says nothing about the database, so a fresh one usually works;
 * the inspector counts the dropped batches and logs once meanwhile.
 */
export class SqliteRequestWriter implements RequestBatchWriter {
  private thread: Worker | undefined;
  /** Batches posted to the current thread and not yet answered, oldest first. */
  private readonly pending: Pending[] = [];
  private startedAt = Number.NEGATIVE_INFINITY;
  /** Why the last thread ended, while no thread runs. */
  private stopped: Error | undefined;
  private closing: Promise<void> | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: SqliteRequestWriterOptions) {
    this.now = opts.now ?? (() => performance.now());
  }

  write(records: readonly NewRequestRecord[], idParts: Uint32Array = newIdParts(records.length)): Promise<void> {
    if (this.closing) return Promise.reject(new Error('inspector writer is closed'));
    let thread = this.thread;
    if (!thread) {
      if (this.now() - this.startedAt < RESTART_INTERVAL_MS) {
        return Promise.reject(this.stopped ?? new Error('inspector writer thread is not running'));
      }
      thread = this.start();
    }
    return new Promise<void>((resolve, reject) => {
      // Throws (rejecting this promise) when a record cannot be packed or cloned; nothing was posted then.
      // The id parts are copied, not transferred: the caller keeps them to name what was stored.
      const command: RequestWriterCommand = { type: 'write', packed: packRecords(records), idParts };
      thread.postMessage(command, [command.packed.values.buffer]);
      // A batch in flight keeps the process alive, as pending I/O would; an idle thread does not.
      if (this.pending.length === 0) thread.ref();
      this.pending.push({ resolve, reject });
    });
  }

  /** Waits for the batches already posted, then closes the thread's connection and ends it. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  /** The running thread, if any; for tests. */
  get runningThread(): Worker | undefined {
    return this.thread;
  }

  private async shutDown(): Promise<void> {
    const thread = this.thread;
    if (!thread) return;
    thread.ref();
    const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    // Queued behind every batch already posted: the thread answers those first.
    thread.postMessage({ type: 'close' } satisfies RequestWriterCommand);
    await exited;
  }

  private start(): Worker {
    this.startedAt = this.now();
    this.stopped = undefined;
    const thread = spawnWriterThread({ file: this.opts.file });
    // The thread alone never keeps the process alive (write() refs it while batches are in flight).
    thread.unref();
    let failure: Error | undefined;
    thread.on('message', (reply: RequestWriterReply) => this.settleOldest(reply));
    thread.on('error', (error) => (failure = error));
    // Node delivers every message the thread posted before 'exit', so answered batches are settled by now.
    thread.on('exit', (code) => this.onExit(code, failure));
    this.thread = thread;
    return thread;
  }

  private settleOldest(reply: RequestWriterReply): void {
    const oldest = this.pending.shift();
    // Closing, the thread stays referenced until it has ended (close() awaits that).
    if (this.pending.length === 0 && !this.closing) this.thread?.unref();
    if (!oldest) return;
    if (reply.ok) oldest.resolve();
    else oldest.reject(Object.assign(new Error(reply.message), { code: reply.code }));
  }

  private onExit(code: number, failure: Error | undefined): void {
    this.thread = undefined;
    const error = this.closing
      ? new Error('inspector writer is closed')
      : new Error(`inspector writer thread stopped (exit code ${code}) before answering`, { cause: failure });
    if (!this.closing) this.stopped = error;
    for (const batch of this.pending.splice(0)) batch.reject(error);
  }
}

/**
 * Starts request-writer-thread beside this module: the compiled .js under dist/, the .ts source
 * when tests run through tsx. Node 20 does not apply the `--import tsx` loader to a worker's
 * entry module (ERR_UNKNOWN_FILE_EXTENSION; tsx issue #354, node issue #47747), so from source
 * a two-line eval'd entry registers tsx's hooks inside the thread and then imports the .ts file.
 */
function spawnWriterThread(workerData: RequestWriterThreadData): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./request-writer-thread.js', import.meta.url), { workerData });
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./request-writer-thread.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  // No inherited `--import tsx`: it would load tsx a second time, to no effect.
  return new Worker(code, { eval: true, workerData, execArgv: [] });
}
