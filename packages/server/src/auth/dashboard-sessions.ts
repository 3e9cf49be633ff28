import { randomBytes } from 'node:crypto';
import type { Account, DashboardSession, Store } from '../store/index.js';
import { isSecretShape, newSecret } from './secret-tokens.js';
import { hashToken } from './tokens.js';

/** Every session cookie value starts with this. */
export const SESSION_TOKEN_PREFIX = 'svs_';
/** Sessions expire this long after sign-in, whatever the activity. */
export const SESSION_LIFETIME_MS = 14 * 24 * 60 * 60 * 1000;

/** A session just created: the cookie value is returned this once and never stored. */
export interface NewSession {
  cookieValue: string;
  session: DashboardSession;
}

/** A signed-in browser resolved from its cookie. */
export interface SessionIdentity {
  account: Account;
  session: DashboardSession;
}

/** Dashboard sessions over the store: create at sign-in, resolve per request, end at sign-out. */
export class DashboardSessions {
  constructor(
    private readonly store: Pick<Store, 'sessions' | 'accounts'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Signs the account in: a new session with its own CSRF token. Expired sessions are swept on the way. */
  async create(accountId: string): Promise<NewSession> {
    const { token, hash } = newSecret(SESSION_TOKEN_PREFIX);
    const at = this.now();
    const session = await this.store.sessions.create({
      tokenHash: hash,
      accountId,
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAt: at + SESSION_LIFETIME_MS,
    });
    // Sign-ins are rare next to requests, so the sweep rides on them; its failure is harmless.
    this.store.sessions.deleteExpired(at).catch(() => undefined);
    return { cookieValue: token, session };
  }

  /** The session and account of a cookie value; undefined when malformed, unknown or expired. */
  async resolve(cookieValue: string | undefined): Promise<SessionIdentity | undefined> {
    if (cookieValue === undefined || !isSecretShape(cookieValue, SESSION_TOKEN_PREFIX)) return undefined;
    const session = await this.store.sessions.byTokenHash(hashToken(cookieValue), this.now());
    if (!session) return undefined;
    const account = await this.store.accounts.byId(session.accountId);
    return account && { account, session };
  }

  /** Signs one browser out. */
  async end(session: DashboardSession): Promise<void> {
    await this.store.sessions.delete(session.tokenHash);
  }

  /** Signs the account's other browsers out (after a password change). */
  async endOthers(accountId: string, keep?: DashboardSession): Promise<void> {
    await this.store.sessions.deleteForAccount(accountId, keep?.tokenHash);
  }
}
