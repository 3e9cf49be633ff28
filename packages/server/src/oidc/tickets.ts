import { createHash, randomBytes } from 'node:crypto';
import type { OidcRepo } from '../store/index.js';

/** How long a sign-in may take at the provider, and how long the hand-back code lives. */
export const SIGN_IN_TTL_MS = 10 * 60_000;
export const CODE_TTL_MS = 60_000;

/** A sign-in in progress, stored under its `state` until the provider sends the browser back. */
export interface SignInTicket {
  provider: string;
  /** The tunnel host, and the origin the visitor used (scheme, host, port) to send it back to. */
  host: string;
  origin: string;
  /** Where on the tunnel host it was going: a path, never another host. */
  path: string;
  verifier: string;
  nonce: string;
  /** SHA-256 of the value of the browser's SIGN_IN_COOKIE. */
  browser: string;
  secure: boolean;
}

/** The one-time code that hands a signed-in browser back to the tunnel host. */
export interface CodeTicket {
  /** The provider signed in with: the session is bound to it. */
  provider: string;
  host: string;
  origin: string;
  path: string;
  browser: string;
  sub: string;
  email: string;
  secure: boolean;
}

/** A fresh random value for a URL or a cookie. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The SHA-256 of a random value, as stored (the value itself never is). */
export function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** What a session cookie says of the account holding its tunnel: a digest (the visitor can read the cookie). */
export function ownerDigest(accountId: string): string {
  return digest(`svc-owner:${accountId}`).slice(0, 16);
}

/** One-time tickets in the store: each is taken at most once, on any node. */
export class Tickets {
  constructor(private readonly repo: OidcRepo) {}

  /** Stores a ticket under a fresh random value and returns that value. */
  async put(kind: 'sign-in' | 'code', payload: SignInTicket | CodeTicket, ttlMs: number): Promise<string> {
    const value = randomToken();
    await this.repo.putTicket(digest(value), kind, JSON.stringify(payload), Date.now() + ttlMs);
    return value;
  }

  /** Takes the ticket of a value: its payload once, then never again; undefined when unknown, used or expired. */
  async take<T>(kind: 'sign-in' | 'code', value: string): Promise<T | undefined> {
    if (value.length === 0 || value.length > 100) return undefined;
    const payload = await this.repo.takeTicket(digest(value), kind, Date.now());
    return payload === undefined ? undefined : (JSON.parse(payload) as T);
  }
}
