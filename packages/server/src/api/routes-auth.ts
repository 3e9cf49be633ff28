import {
  AccountInputError,
  burnVerification,
  consumeSignInLink,
  createAccount,
  passwordProblem,
  readSessionCookie,
  setAccountPassword,
  verifyPassword,
  type DashboardSessions,
  type SignInLimiter,
} from '../auth/index.js';
import { StoreConflictError, type Store } from '../store/index.js';
import { definePublicRoute } from './define-route.js';
import { ApiError, ApiErrorCode, invalidRequest } from './errors.js';
import type { ApiResponse } from './http-io.js';
import { arrivedOverTls, checkCsrf, clientAddress } from './request-auth.js';
import type { PublicRoute } from './router.js';
import { LinkBody, SessionState, SignedIn, SignInBody, SignUpBody } from './schemas.js';
import { accountView, clearSessionCookie, startSession } from './session-cookie.js';

/** SVC_SIGNUP: whether anyone may create an account from the dashboard. */
export type SignupMode = 'open' | 'closed';

/** What the /auth routes need. */
export interface AuthRouteDeps {
  store: Pick<Store, 'accounts' | 'sessions' | 'signInLinks'>;
  sessions: DashboardSessions;
  limiter: SignInLimiter;
  signup: SignupMode;
  /** One line per sign-in event (audit); never a password, cookie or link token. */
  onAuthEvent?: (event: { event: string; accountId?: string; ip: string }) => void;
}

const WRONG_CREDENTIALS = 'wrong email or password';
const SIGNUP_CLOSED = 'sign-up is closed on this server; ask its operator for an account';
const EMAIL_TAKEN = 'an account with this email already exists';
const LINK_INVALID = 'this sign-in link is invalid or has expired; run `svc-server account link --email E` for a new one';

/** 429 with Retry-After when the account or the IP has too many recent failed sign-ins. */
export function refuseWhileBlocked(limiter: SignInLimiter, email: string, ip: string, res: ApiResponse): void {
  const waitMs = limiter.retryAfterMs(email, ip);
  if (waitMs <= 0) return;
  res.setHeader('retry-after', String(Math.ceil(waitMs / 1000)));
  const minutes = Math.ceil(waitMs / 60_000);
  throw new ApiError(
    429,
    ApiErrorCode.TOO_MANY_ATTEMPTS,
    `too many failed sign-ins; try again in ${minutes} minute${minutes === 1 ? '' : 's'}`,
  );
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw invalidRequest(problem);
}

/** The dashboard's sign-in endpoints: GET /auth/session and POST /auth/{signup,signin,signout,link}. */
export function authRoutes(deps: AuthRouteDeps): PublicRoute[] {
  const audit = deps.onAuthEvent ?? (() => undefined);
  return [
    definePublicRoute({
      method: 'GET',
      path: '/auth/session',
      tag: 'sign-in',
      summary: 'Whether this browser is signed in, with its CSRF token',
      status: 200,
      response: SessionState,
      responseDescription: 'the sign-in state',
      async handler({ req }) {
        const signedIn = await deps.sessions.resolve(readSessionCookie(req.headers.cookie, arrivedOverTls(req)));
        if (!signedIn) return { signedIn: false as const, signup: deps.signup };
        const hasPassword = (await deps.store.accounts.passwordHash(signedIn.account.id)) !== undefined;
        return {
          signedIn: true as const,
          signup: deps.signup,
          account: accountView(signedIn.account),
          csrfToken: signedIn.session.csrfToken,
          hasPassword,
        };
      },
    }),
    definePublicRoute({
      method: 'POST',
      path: '/auth/signup',
      tag: 'sign-in',
      summary: 'Create an account with a password and sign in',
      description:
        'The account starts without agent tokens: create one with POST /v1/keys. Refused with 403 signup_closed when SVC_SIGNUP=closed.',
      body: SignUpBody,
      status: 201,
      response: SignedIn,
      responseDescription: 'signed in; the session cookie is in Set-Cookie',
      errors: [403, 409],
      async handler({ req, res, body }) {
        if (deps.signup === 'closed') throw new ApiError(403, ApiErrorCode.SIGNUP_CLOSED, SIGNUP_CLOSED);
        checkPassword(body.password);
        let account;
        try {
          account = await createAccount(deps.store, { email: body.email, name: body.name });
        } catch (error) {
          if (error instanceof AccountInputError) throw invalidRequest(error.message);
          if (error instanceof StoreConflictError) throw new ApiError(409, ApiErrorCode.EMAIL_TAKEN, EMAIL_TAKEN);
          throw error;
        }
        await setAccountPassword(deps.store, account.id, body.password);
        audit({ event: 'signup', accountId: account.id, ip: clientAddress(req) });
        return startSession(deps.sessions, req, res, account);
      },
    }),
    definePublicRoute({
      method: 'POST',
      path: '/auth/signin',
      tag: 'sign-in',
      summary: 'Sign in with email and password',
      description: 'After 5 failures for one account, or 20 from one client IP, within 15 minutes: 429 with Retry-After.',
      body: SignInBody,
      status: 200,
      response: SignedIn,
      responseDescription: 'signed in; the session cookie is in Set-Cookie',
      errors: [401, 429],
      async handler({ req, res, body }) {
        const ip = clientAddress(req);
        refuseWhileBlocked(deps.limiter, body.email, ip, res);
        const account = await deps.store.accounts.byEmail(body.email);
        const stored = account && (await deps.store.accounts.passwordHash(account.id));
        // An unknown email costs the same time as a wrong password: timing does not reveal accounts.
        const valid = stored ? await verifyPassword(body.password, stored) : (await burnVerification(body.password), false);
        if (!account || !valid) {
          deps.limiter.recordFailure(body.email, ip);
          audit({ event: 'signin failed', ...(account ? { accountId: account.id } : {}), ip });
          throw new ApiError(401, ApiErrorCode.INVALID_CREDENTIALS, WRONG_CREDENTIALS);
        }
        deps.limiter.recordSuccess(body.email);
        audit({ event: 'signin', accountId: account.id, ip });
        return startSession(deps.sessions, req, res, account);
      },
    }),
    definePublicRoute({
      method: 'POST',
      path: '/auth/signout',
      tag: 'sign-in',
      summary: 'Sign this browser out',
      description:
        'Needs the session cookie and X-CSRF-Token. Deletes the session and expires the cookie; without a valid session it only expires the cookie.',
      status: 204,
      responseDescription: 'signed out',
      errors: [403],
      async handler({ req, res }) {
        const signedIn = await deps.sessions.resolve(readSessionCookie(req.headers.cookie, arrivedOverTls(req)));
        if (signedIn) {
          checkCsrf(req, signedIn.session);
          await deps.sessions.end(signedIn.session);
          audit({ event: 'signout', accountId: signedIn.account.id, ip: clientAddress(req) });
        }
        clearSessionCookie(req, res);
      },
    }),
    definePublicRoute({
      method: 'POST',
      path: '/auth/link',
      tag: 'sign-in',
      summary: 'Use a one-time sign-in link: set the password and sign in',
      description:
        'The token comes from a link printed by the first start or `svc-server account link --email E`; it works once, within 30 minutes. ' +
        "Setting the password signs the account's other browsers out.",
      body: LinkBody,
      status: 200,
      response: SignedIn,
      responseDescription: 'signed in; the session cookie is in Set-Cookie',
      async handler({ req, res, body }) {
        // Before the link is spent: a too-short password must not cost the person their link.
        checkPassword(body.password);
        const accountId = await consumeSignInLink(deps.store, body.token);
        const account = accountId === undefined ? undefined : await deps.store.accounts.byId(accountId);
        if (!account) throw new ApiError(400, ApiErrorCode.LINK_INVALID, LINK_INVALID);
        await setAccountPassword(deps.store, account.id, body.password);
        audit({ event: 'signin by link', accountId: account.id, ip: clientAddress(req) });
        return startSession(deps.sessions, req, res, account);
      },
    }),
  ];
}
