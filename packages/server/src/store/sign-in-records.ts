// Dashboard sign-in: browser sessions and one-time sign-in links. Same rules as store.ts:
// "not found" is `undefined`. Secrets are never stored, only their sha256 hex.

/** A signed-in browser. */
export interface DashboardSession {
  /** sha256 hex of the cookie value. */
  tokenHash: string;
  accountId: string;
  /** Sent back by the dashboard in X-CSRF-Token on every state-changing request. */
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export interface NewDashboardSession {
  tokenHash: string;
  accountId: string;
  csrfToken: string;
  expiresAt: number;
}

export interface NewSignInLink {
  /** sha256 hex of the link token. */
  tokenHash: string;
  accountId: string;
  expiresAt: number;
}

export interface DashboardSessionRepo {
  create(input: NewDashboardSession): Promise<DashboardSession>;
  /** The session unless it is unknown or expired at `atMs`. */
  byTokenHash(tokenHash: string, atMs: number): Promise<DashboardSession | undefined>;
  /** Deletes one session (sign-out); false when there was none. */
  delete(tokenHash: string): Promise<boolean>;
  /** Deletes the account's sessions except `keepTokenHash` (password change); returns how many. */
  deleteForAccount(accountId: string, keepTokenHash?: string): Promise<number>;
  /** Deletes sessions expired at `atMs`; returns how many. */
  deleteExpired(atMs: number): Promise<number>;
}

export interface SignInLinkRepo {
  create(input: NewSignInLink): Promise<void>;
  /**
   * Marks the link used and returns its account id, in one conditional write, so two
   * concurrent uses cannot both succeed; undefined when unknown, used or expired at `atMs`.
   */
  consume(tokenHash: string, atMs: number): Promise<string | undefined>;
  /** Deletes links expired at `atMs`; returns how many. */
  deleteExpired(atMs: number): Promise<number>;
}
