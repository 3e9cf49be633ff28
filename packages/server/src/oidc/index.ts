// Single sign-on (OpenID Connect): the providers of SVC_OIDC_PROVIDERS, the tunnel host's side
// (the Gate the policy room asks through its SignIn interface), the apex's callback and JWKS, and
// the keys and one-time tickets all nodes share through the store.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Logger } from 'pino';
import type { OidcProviderConfig } from '../config.js';
import type { SignIn } from '../policy/index.js';
import type { OidcRepo } from '../store/index.js';
import { createApexSignIn } from './apex.js';
import { Gate } from './gate.js';
import { IdentityTokens } from './identity-tokens.js';
import { loadSignInKeys } from './keys.js';
import { Providers } from './providers.js';
import { SessionCookies } from './session-cookie.js';
import { Tickets } from './tickets.js';

export { JWKS_PATH } from './apex.js';
export { LOGOUT_PATH, RETURN_PATH } from './gate.js';
export { SESSION_COOKIE } from './session-cookie.js';

/** How often expired tickets are deleted from the store. */
const PRUNE_INTERVAL_MS = 60_000;

/** Single sign-on, wired: the gate for the binder, the apex handler, and a stop for shutdown. */
export interface SingleSignOn {
  signIn: SignIn;
  /** Takes the apex requests that are the sign-in's (callback, JWKS); answers whether it did. */
  apex(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): boolean;
  close(): void;
}

/** Starts single sign-on for the configured providers (none: undefined); the keys are loaded from the store first. */
export async function startSingleSignOn(options: {
  providers: readonly OidcProviderConfig[];
  sessionHours: number;
  repo: OidcRepo;
  apexUrl(): string;
  log: Logger;
}): Promise<SingleSignOn | undefined> {
  if (options.providers.length === 0) return undefined;
  const keys = await loadSignInKeys(options.repo);
  const providers = new Providers(options.providers);
  const tickets = new Tickets(options.repo);
  const tokens = new IdentityTokens(keys.identity, options.apexUrl);
  const log = options.log.child({ component: 'oidc' });
  const gate = new Gate({
    providers,
    tickets,
    cookies: new SessionCookies(keys.cookie),
    tokens,
    callbackUrl: (name) => `${options.apexUrl()}/auth/oidc/${name}/callback`,
    sessionMs: options.sessionHours * 3_600_000,
    log,
  });
  const apex = createApexSignIn({ providers, tickets, jwks: () => tokens.jwks(), apexUrl: options.apexUrl, log });
  const prune = setInterval(() => {
    options.repo.deleteExpiredTickets(Date.now()).catch((err: unknown) => log.warn({ err }, 'deleting expired sign-in tickets failed'));
  }, PRUNE_INTERVAL_MS);
  prune.unref();
  return { signIn: gate, apex, close: () => clearInterval(prune) };
}
