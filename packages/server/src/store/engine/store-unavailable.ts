/**
 * Failures that mean "the store cannot answer right now", not "this request is wrong": SQLite
 * locked by another writer past its busy timeout or out of disk, PostgreSQL restarting or
 * unreachable. The API answers them 503 with Retry-After and the inspector keeps the batch for its
 * next write, so a passing fault is retried rather than treated as a bug; anything else stays a 500.
 */

/** Seconds a client is asked to wait before retrying. */
export const STORE_RETRY_AFTER_SECONDS = 5;

const TRANSIENT_CODES = new Set([
  // SQLite (better-sqlite3 SqliteError.code; extended codes start with these).
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  // Sockets to PostgreSQL.
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  // PostgreSQL SQLSTATE: connection exceptions (08…), insufficient resources (53…), operator
  // intervention (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now).
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53000',
  '53100',
  '53200',
  '53300',
  '57P01',
  '57P02',
  '57P03',
]);

/** Messages of node-postgres errors that carry no code. */
const TRANSIENT_MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /^Client has encountered a connection error/,
];

/** Whether `error` (or an error it wraps as `cause`) says the store is passing through a fault. */
export function isStoreUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      const base = code.startsWith('SQLITE_') ? code.split('_').slice(0, 2).join('_') : code;
      if (TRANSIENT_CODES.has(base)) return true;
    }
    if (TRANSIENT_MESSAGES.some((pattern) => pattern.test(current instanceof Error ? current.message : ''))) return true;
  }
  return false;
}
