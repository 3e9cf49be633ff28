import { passwordProblem, setAccountPassword, verifyPassword, type SignInLimiter } from '../auth/index.js';
import type { Store } from '../store/index.js';
import { defineRoute } from './define-route.js';
import { ApiError, ApiErrorCode, invalidRequest } from './errors.js';
import { clientAddress } from './request-auth.js';
import type { Route } from './router.js';
import { refuseWhileBlocked } from './routes-auth.js';
import { PasswordChangeBody } from './schemas.js';

/** What POST /v1/me/password needs. */
export interface PasswordRouteDeps {
  store: Pick<Store, 'accounts' | 'sessions'>;
  limiter: SignInLimiter;
}

/** POST /v1/me/password: set or change the dashboard password, with a token or the session. */
export function passwordRoutes(deps: PasswordRouteDeps): Route[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/me/password',
      tag: 'account',
      summary: 'Set or change the dashboard password',
      description:
        "Once the account has a password, currentPassword must match (403 invalid_credentials); wrong guesses count toward the sign-in limit. The account's other dashboard sessions are signed out.",
      body: PasswordChangeBody,
      status: 204,
      responseDescription: 'the password is set',
      errors: [403, 429],
      async handler({ req, res, account, session, body }) {
        const stored = await deps.store.accounts.passwordHash(account.id);
        if (stored !== undefined) {
          const ip = clientAddress(req);
          refuseWhileBlocked(deps.limiter, account.email, ip, res);
          if (body.currentPassword === undefined || !(await verifyPassword(body.currentPassword, stored))) {
            deps.limiter.recordFailure(account.email, ip);
            throw new ApiError(403, ApiErrorCode.INVALID_CREDENTIALS, 'current password is wrong');
          }
        }
        const problem = passwordProblem(body.newPassword);
        if (problem) throw invalidRequest(problem);
        await setAccountPassword(deps.store, account.id, body.newPassword, session?.tokenHash);
      },
    }),
  ];
}
