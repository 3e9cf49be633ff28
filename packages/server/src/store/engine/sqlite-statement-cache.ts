import type BetterSqlite3 from 'better-sqlite3';

/**
 * Prepared statements kept per database. The server's SQL shapes are few: every repo query is
 * parameterized (limits and offsets included), and the listing's optional filters make at most
 * a few dozen shapes. 128 holds all of them with room to spare, each costing a few KB of SQLite memory.
 */
export const DEFAULT_STATEMENT_CACHE_SIZE = 128;

/**
 * The better-sqlite3 handle as Kysely's SqliteDialect sees it (the two methods its driver
 * calls), with `prepare` answered from a bounded LRU cache of statements.
 *
 * Why: Kysely's SqliteDriver calls `db.prepare(sql)` for EVERY query, and SQLite parses and
 * plans the SQL again each time. Measured: a primary-key lookup (`accounts.byId`) went from
 * ~19 to ~10 µs of CPU per call; preparing the inspector's 256-row INSERT cost ~350 µs
 * (~1.4 µs per row), and its single-row INSERT is now prepared once per process.
 *
 * Why reuse is safe here:
 * - Kysely's driver runs one query at a time on the single connection, and `executeQuery`
 *   prepares and runs in the same synchronous step; better-sqlite3 resets a statement after
 *   every run()/all() (also when they throw), so a cached statement holds no read snapshot
 *   (it does not stall WAL checkpoints or hide other processes' writes) and no bindings.
 * - The one stateful use is `iterate()` (Kysely's `.stream()`): better-sqlite3 locks that
 *   statement until the iterator ends. A locked cached statement is never handed out again;
 *   the caller gets a fresh, uncached statement, exactly what it got before this cache.
 * - Nothing reaches the statements but Kysely, which never switches their modes
 *   (raw/pluck/expand/safeIntegers): those settings would stick to a cached statement.
 * - A schema change (a migration run by another process) makes SQLite re-prepare the
 *   statement transparently on its next step.
 */
export class StatementCachingDatabase {
  /** Map order is recency order: the first key is the least recently used. */
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(
    private readonly raw: BetterSqlite3.Database,
    private readonly capacity = DEFAULT_STATEMENT_CACHE_SIZE,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`statement cache capacity must be a positive integer, got ${capacity}`);
  }

  /** The cached statement for this SQL, else a newly prepared (and cached) one. */
  prepare(sql: string): BetterSqlite3.Statement {
    const cached = this.statements.get(sql);
    if (cached !== undefined) {
      // Busy: an iterator of it is still open. Leave it to that iterator.
      if (cached.busy) return this.raw.prepare(sql);
      // Re-inserting moves the entry to the most recent end.
      this.statements.delete(sql);
      this.statements.set(sql, cached);
      return cached;
    }
    // Prepare before caching: SQL that fails to prepare leaves the cache as it was.
    const statement = this.raw.prepare(sql);
    this.statements.set(sql, statement);
    if (this.statements.size > this.capacity) {
      // An evicted statement is only dropped, never finalized by hand: a caller that still
      // holds it (an open iterator) keeps a working statement, and GC frees it later.
      const oldest = this.statements.keys().next().value as string;
      this.statements.delete(oldest);
    }
    return statement;
  }

  /** Closes the database; better-sqlite3 finalizes every statement it prepared. */
  close(): void {
    this.statements.clear();
    this.raw.close();
  }

  /** Statements currently cached. */
  get size(): number {
    return this.statements.size;
  }
}
