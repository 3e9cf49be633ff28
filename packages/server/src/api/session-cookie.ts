import type { z } from 'zod';
import { expiredSessionCookie, SESSION_LIFETIME_MS, sessionCookie, type DashboardSessions } from '../auth/index.js';
import type { Account } from '../store/index.js';
import type { ApiRequest, ApiResponse } from './http-io.js';
import { arrivedOverTls } from './request-auth.js';
import type { SignedIn } from './schemas.js';

/** The account as GET /v1/me and the sign-in answers show it. */
export function accountView(account: Account): z.input<typeof SignedIn>['account'] {
  return { id: account.id, email: account.email, name: account.name, plan: account.plan };
}

/** Signs the account in on this browser: a new session, its cookie in Set-Cookie, and the answer body. */
export async function startSession(
  sessions: DashboardSessions,
  req: ApiRequest,
  res: ApiResponse,
  account: Account,
): Promise<z.input<typeof SignedIn>> {
  const { cookieValue, session } = await sessions.create(account.id);
  const cookie = sessionCookie(cookieValue, { secure: arrivedOverTls(req), maxAgeSeconds: Math.floor(SESSION_LIFETIME_MS / 1000) });
  res.setHeader('set-cookie', cookie);
  return { account: accountView(account), csrfToken: session.csrfToken };
}

/** Tells the browser to drop its session cookie. */
export function clearSessionCookie(req: ApiRequest, res: ApiResponse): void {
  res.setHeader('set-cookie', expiredSessionCookie(arrivedOverTls(req)));
}
