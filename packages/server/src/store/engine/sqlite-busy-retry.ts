import { setTimeout as delay } from 'node:timers/promises';
import {
  CompiledQuery,
  SqliteDialect,
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type SqliteDialectConfig,
} from 'kysely';

/**
 * Waits for another connection's write lock on the event loop's terms.
 *
 * better-sqlite3 is synchronous: with a busy_timeout, SQLite's busy handler sleeps inside the
 * call, and the whole process (every visitor's bytes, every agent's heartbeats) stops with it.
 * A foreign writer holding the lock for seconds froze proxying for seconds on each store write.
 * So the server's main connection runs with busy_timeout 0 (see engine/open-database.ts) and this driver
 * does the waiting instead: a statement or a BEGIN that meets SQLITE_BUSY gives the connection
 * back, sleeps on a timer and tries again, until `budgetMs` has passed; then the SQLITE_BUSY
 * error goes up and the API maps it to 503 (store-unavailable.ts).
 *
 * Transactions begin IMMEDIATE: the write lock is taken at BEGIN, where a retry is safe, and a
 * statement inside the transaction never meets the lock (WAL readers never block a writer).
 * With a deferred BEGIN, the first write would upgrade a read snapshot, and SQLite answers that
 * upgrade SQLITE_BUSY at once, with no way to wait for it but to start the transaction over.
 *
 * Kysely's SqliteDriver serialises its single connection behind a mutex. Statements outside a
 * transaction take that mutex for one attempt only, so a write waiting for the lock does not
 * hold up the reads behind it (they run under a foreign write lock in WAL mode).
 */

/** Pauses between attempts: short first (the inspector thread's batches last milliseconds), then 100 ms. */
const BACKOFF_MS = [1, 2, 5, 10, 20, 50, 100] as const;

export interface BusyRetryOptions {
  /** How long a statement or a BEGIN keeps trying before its SQLITE_BUSY is thrown. */
  budgetMs: number;
  /** Monotonic clock, ms. Default performance.now. */
  now?: () => number;
}

/** SqliteDialect whose driver retries SQLITE_BUSY asynchronously (see above). */
export class BusyRetrySqliteDialect extends SqliteDialect {
  constructor(
    config: SqliteDialectConfig,
    private readonly retry: BusyRetryOptions,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new BusyRetryDriver(super.createDriver(), this.retry);
  }
}

/** Whether a SQLite error is "the lock is held elsewhere" (SQLITE_BUSY and its extended codes). */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/** What Kysely holds between acquire and release: the inner connection only while a transaction is open. */
class RetryingConnection implements DatabaseConnection {
  held: DatabaseConnection | undefined;

  constructor(private readonly driver: BusyRetryDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.held) return this.held.executeQuery<R>(query);
    return this.driver.withRetry((inner) => inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.held) {
      yield* this.held.streamQuery<R>(query, chunkSize);
      return;
    }
    // A stream is a read: it never meets a writer's lock in WAL mode, so it is not retried.
    const inner = await this.driver.inner.acquireConnection();
    try {
      yield* inner.streamQuery<R>(query, chunkSize);
    } finally {
      await this.driver.inner.releaseConnection(inner);
    }
  }
}

class BusyRetryDriver implements Driver {
  private readonly now: () => number;

  constructor(
    readonly inner: Driver,
    private readonly retry: BusyRetryOptions,
  ) {
    this.now = retry.now ?? (() => performance.now());
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  acquireConnection(): Promise<DatabaseConnection> {
    return Promise.resolve(new RetryingConnection(this));
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const conn = connection as RetryingConnection;
    // The inner connection stays held from a successful BEGIN until releaseConnection.
    await this.withRetry(async (inner) => {
      await inner.executeQuery(CompiledQuery.raw('begin immediate'));
      conn.held = inner;
    }, true);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.heldOf(connection).executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.heldOf(connection).executeQuery(CompiledQuery.raw('rollback'));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.savepoint!(this.heldOf(connection), name, compile);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.rollbackToSavepoint!(this.heldOf(connection), name, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.inner.releaseSavepoint!(this.heldOf(connection), name, compile);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const conn = connection as RetryingConnection;
    const held = conn.held;
    conn.held = undefined;
    if (held) await this.inner.releaseConnection(held);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  /**
   * Runs `attempt` on the inner connection, retrying SQLITE_BUSY with the connection released
   * between attempts. `keep`: a successful attempt keeps the connection (BEGIN).
   */
  async withRetry<T>(attempt: (inner: DatabaseConnection) => Promise<T>, keep = false): Promise<T> {
    const deadline = this.now() + this.retry.budgetMs;
    for (let tries = 0; ; tries++) {
      const inner = await this.inner.acquireConnection();
      let result: T;
      try {
        result = await attempt(inner);
      } catch (error) {
        await this.inner.releaseConnection(inner);
        const pause = BACKOFF_MS[Math.min(tries, BACKOFF_MS.length - 1)]!;
        if (!isSqliteBusy(error) || this.now() + pause > deadline) throw error;
        await delay(pause);
        continue;
      }
      if (!keep) await this.inner.releaseConnection(inner);
      return result;
    }
  }

  private heldOf(connection: DatabaseConnection): DatabaseConnection {
    const held = (connection as RetryingConnection).held;
    if (!held) throw new Error('no transaction is open on this connection');
    return held;
  }
}
