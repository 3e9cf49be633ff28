import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { parsePasswordHash, scryptKey, type BasicAuthUser } from '@svcrouter/protocol';

/** Longest Authorization header looked at; a longer one fails at once, without hashing. */
export const MAX_AUTHORIZATION_LENGTH = 1024;
/** Failed attempts per visitor address in FAILURE_WINDOW_MS before it gets 429 for BLOCK_MS. */
export const MAX_FAILURES = 10;
export const FAILURE_WINDOW_MS = 60_000;
export const BLOCK_MS = 60_000;
/** Digests of checked credentials remembered per tunnel, and addresses tracked; past these they start over. */
const MAX_REMEMBERED = 1_000;
const MAX_TRACKED = 10_000;
/**
 * New credentials being checked by scrypt at once, per tunnel and per process. Past these a new
 * credential is answered 'busy' at once: scrypt runs on libuv's few threads, which every
 * tunnel shares, so a flood of guesses (from many addresses) must not queue without bound.
 */
export const MAX_CHECKS_PER_TUNNEL = 8;
export const MAX_CHECKS_PER_PROCESS = 32;
let checksInProcess = 0;

/** The outcome of a basic-auth check; 'busy': too many new credentials are being checked right now. */
export type AuthVerdict = 'ok' | 'unauthorized' | 'limited' | 'busy';

interface Failures {
  count: number;
  since: number;
  blockedUntil: number;
}

/**
 * The basic-auth rule of one tunnel. Passwords exist here only as the salted scrypt hashes the
 * bind carried. A header is checked once by scrypt (off the event loop, in constant time, with
 * a dummy hash for unknown users so a name's existence does not show in the timing); its verdict
 * is then remembered under a SHA-256 digest salted with a per-process random pepper, so a
 * browser's next request costs one hash, and the header's text is never kept.
 */
export class BasicAuth {
  private readonly users = new Map<string, { salt: Buffer; key: Buffer }>();
  /** Hex, so that it prefixes the header as text: one one-shot hash per request, no Hash object. */
  private readonly pepper = randomBytes(32).toString('hex');
  private readonly verdicts = new Map<string, boolean>();
  private readonly pending = new Map<string, Promise<boolean>>();
  private readonly failures = new Map<string, Failures>();
  /** Credentials of each address being checked now: they count as failures until they are not. */
  private readonly checking = new Map<string, number>();
  private readonly dummy: { salt: Buffer; key: Buffer };

  constructor(users: readonly BasicAuthUser[]) {
    for (const { user, hash } of users) {
      const parsed = parsePasswordHash(hash);
      if (parsed) this.users.set(user, parsed);
    }
    this.dummy = { salt: randomBytes(16), key: randomBytes(32) };
  }

  /** Checks a visitor's Authorization header (undefined when it sent none); `now` is Date.now(). */
  check(ip: string, authorization: string | undefined, now: number): AuthVerdict | Promise<AuthVerdict> {
    if (this.failures.size > 0) {
      const record = this.failures.get(ip);
      if (record !== undefined && record.blockedUntil > now) return 'limited';
    }
    // No credentials at all is how every browser starts: asked for, not counted as a failure.
    if (authorization === undefined || authorization === '') return 'unauthorized';
    if (authorization.length > MAX_AUTHORIZATION_LENGTH) return this.failed(ip, now);
    const digest = hash('sha256', this.pepper + authorization, 'base64');
    const known = this.verdicts.get(digest);
    if (known === true) return 'ok';
    if (known === false) return this.failed(ip, now);
    let verifying = this.pending.get(digest);
    if (verifying === undefined) {
      // Guesses sent in parallel count before their verdicts do, or they would all be hashed.
      const checking = this.checking.get(ip) ?? 0;
      if (checking + this.recentFailures(ip, now) >= MAX_FAILURES) return 'limited';
      if (this.pending.size >= MAX_CHECKS_PER_TUNNEL || checksInProcess >= MAX_CHECKS_PER_PROCESS) return 'busy';
      this.checking.set(ip, checking + 1);
      checksInProcess++;
      verifying = this.verify(authorization)
        .catch(() => false)
        .then((ok) => {
          checksInProcess--;
          this.settled(ip);
          this.pending.delete(digest);
          if (this.verdicts.size >= MAX_REMEMBERED) this.verdicts.clear();
          this.verdicts.set(digest, ok);
          return ok;
        });
      this.pending.set(digest, verifying);
    }
    return verifying.then((ok) => (ok ? 'ok' : this.failed(ip, Date.now())));
  }

  /** Failed attempts of `ip` in its current window. */
  private recentFailures(ip: string, now: number): number {
    const record = this.failures.get(ip);
    return record === undefined || now - record.since >= FAILURE_WINDOW_MS ? 0 : record.count;
  }

  /** One check that `ip` started is over. */
  private settled(ip: string): void {
    const left = this.checking.get(ip)! - 1;
    if (left === 0) this.checking.delete(ip);
    else this.checking.set(ip, left);
  }

  /** Whether the header holds a known user and that user's password. */
  private async verify(authorization: string): Promise<boolean> {
    const credentials = decodeBasic(authorization);
    if (credentials === undefined) return false;
    const entry = this.users.get(credentials.user);
    const { salt, key } = entry ?? this.dummy;
    const derived = await scryptKey(credentials.password, salt);
    return timingSafeEqual(derived, key) && entry !== undefined;
  }

  /** Counts a failed attempt of `ip`; the tenth in a window blocks the address for BLOCK_MS. */
  private failed(ip: string, now: number): AuthVerdict {
    let record = this.failures.get(ip);
    if (record === undefined || now - record.since >= FAILURE_WINDOW_MS) {
      if (record === undefined && this.failures.size >= MAX_TRACKED) this.prune(now);
      record = { count: 0, since: now, blockedUntil: 0 };
      this.failures.set(ip, record);
    }
    record.count++;
    if (record.count >= MAX_FAILURES) {
      record.blockedUntil = now + BLOCK_MS;
      // The window restarts once the block ends.
      record.since = record.blockedUntil;
      record.count = 0;
    }
    return 'unauthorized';
  }

  private prune(now: number): void {
    for (const [ip, record] of this.failures) {
      if (record.blockedUntil <= now && now - record.since >= FAILURE_WINDOW_MS) this.failures.delete(ip);
    }
    if (this.failures.size >= MAX_TRACKED) this.failures.clear();
  }
}

/** User and password bytes of a `Basic` header, or undefined when it is not one (no colon, bad base64…). */
export function decodeBasic(authorization: string): { user: string; password: Buffer } | undefined {
  const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(authorization);
  if (!match) return undefined;
  const encoded = match[1]!;
  if (encoded.length % 4 !== 0) return undefined;
  const decoded = Buffer.from(encoded, 'base64');
  const colon = decoded.indexOf(0x3a);
  if (colon < 0) return undefined;
  const userBytes = decoded.subarray(0, colon);
  const user = userBytes.toString('utf8');
  // Bytes that are not UTF-8 are never a user name (the replacement character would stand in).
  if (!Buffer.from(user, 'utf8').equals(userBytes)) return undefined;
  return { user, password: decoded.subarray(colon + 1) };
}
