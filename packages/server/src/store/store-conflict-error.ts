/** Thrown when a write would break a uniqueness rule (email taken, hostname online elsewhere). */
export class StoreConflictError extends Error {
  readonly code = 'STORE_CONFLICT';

  constructor(message: string) {
    super(message);
    this.name = 'StoreConflictError';
  }
}

/** Thrown when a bind without rules would take over a live tunnel of the same account that has rules. */
export class PolicyConflictError extends StoreConflictError {
  constructor(hostname: string) {
    super(`hostname ${hostname} is online with access rules; a bind without rules may not replace it`);
    this.name = 'PolicyConflictError';
  }
}

/** Thrown when a bind would mix a pool and a tunnel of its own on one hostname of the account. */
export class PoolConflictError extends StoreConflictError {
  constructor(
    hostname: string,
    /** Whether the name is held as a pool (the refused bind had no pool), else by a tunnel of its own. */
    readonly heldAsPool: boolean,
  ) {
    super(`hostname ${hostname} is online ${heldAsPool ? 'as a pool' : 'without a pool'}`);
    this.name = 'PoolConflictError';
  }
}

// better-sqlite3 reports SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY; pg reports SQLSTATE 23505.
const UNIQUE_CODES = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505']);

/** True when a driver error is a unique-constraint violation, on either engine. */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || !('code' in err)) return false;
  return typeof err.code === 'string' && UNIQUE_CODES.has(err.code);
}
