import BetterSqlite3 from 'better-sqlite3';

// Connection settings shared by every SQLite connection the server opens to its file: the
// store's main connection (open-database.ts) and the inspector's writer thread.

/**
 * How long a SQLite statement waits for another connection's write lock: inside SQLite on the
 * inspector's writer thread and while the store opens, on timers on the main connection once
 * it is open (sqlite-busy-retry.ts).
 */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/** Opens (creating if missing) the database file with the busy timeout already set. */
export function openSqliteConnection(file: string): BetterSqlite3.Database {
  const raw = new BetterSqlite3(file, { timeout: SQLITE_BUSY_TIMEOUT_MS });
  try {
    // busy_timeout first: the pragmas that follow may already contend with another connection.
    raw.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  } catch (err) {
    raw.close();
    throw err;
  }
  return raw;
}

/**
 * The per-connection pragmas. WAL itself is a property of the file (persistent), switched on
 * once by open-database.ts. WAL lets the running server, its inspector writer thread and
 * `svc-server account create` read and write the same file at once; NORMAL sync is durable
 * at checkpoints and is the recommended pairing with WAL.
 */
export function applyConnectionPragmas(raw: BetterSqlite3.Database): void {
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
}
