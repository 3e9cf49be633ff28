import { parentPort, workerData } from 'node:worker_threads';
import { pagesFromBatch } from './request-pages.js';
import type { PackedBatch } from './request-rows.js';
import { applyConnectionPragmas, openSqliteConnection } from '../engine/sqlite-connection.js';

// Entry module of the inspector's SQLite writer thread (started by sqlite-request-writer.ts).
// better-sqlite3 is synchronous, and on the edge's event loop the inserts, commits and WAL
// checkpoints for every proxied request made the loop the edge's bottleneck. Here the same work
// runs on its own connection to the same file; WAL lets it write while the main connection reads.
// What it cost and saved: docs/performance.md#the-traffic-inspector.

/** What the thread is started with. */
export interface RequestWriterThreadData {
  /** The SQLite database file; migrations have already run on it. */
  file: string;
}

/**
 * Commands, answered one by one in the order they arrive. `packed` is a batch's records as
 * packRecords packs them, `idParts` their ids as newIdParts made them.
 */
export type RequestWriterCommand = { type: 'write'; packed: PackedBatch; idParts: Uint32Array } | { type: 'close' };

/** The answer to one `write` command. */
export type RequestWriterReply = { ok: true } | { ok: false; message: string; code: string | undefined };

const port = parentPort;
if (!port) throw new Error('request-writer-thread runs only as a worker thread');
const { file } = workerData as RequestWriterThreadData;

const db = openSqliteConnection(file);
applyConnectionPragmas(db);
const statement = db.prepare(
  'insert into request_pages (account_id, newest_ts, newest_id, oldest_ts, record_count, format, strings, vals, id_parts) ' +
    'values (@account_id, @newest_ts, @newest_id, @oldest_ts, @record_count, @format, @strings, @vals, @id_parts)',
);
// ONE transaction per batch: one COMMIT (and at most one fsync) for the whole batch, and all
// or nothing, since better-sqlite3 rolls the transaction back when the function throws.
// Pages are made here, so the main thread only packs the records and draws their ids.
const insertBatch = db.transaction((packed: PackedBatch, idParts: Uint32Array) => {
  for (const page of pagesFromBatch(packed, idParts)) statement.run(page);
});

port.on('message', (command: RequestWriterCommand) => {
  if (command.type === 'close') {
    // Every earlier command has been answered (they run in order). Closing the port lets the
    // thread end on its own once this handler returns.
    db.close();
    port.close();
    return;
  }
  let reply: RequestWriterReply;
  try {
    // IMMEDIATE takes the write lock at BEGIN, waiting up to busy_timeout for the main
    // connection (usage flushes, retention) instead of failing on a lock upgrade later.
    // The other way round, a main-connection write that meets this transaction retries on
    // timers (sqlite-busy-retry.ts); this thread may block, the main thread must not.
    insertBatch.immediate(command.packed, command.idParts);
    reply = { ok: true };
  } catch (error) {
    const err = error as { message?: unknown; code?: unknown };
    reply = { ok: false, message: String(err.message ?? error), code: typeof err.code === 'string' ? err.code : undefined };
  }
  port.postMessage(reply);
});
