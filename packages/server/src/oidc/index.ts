// Single sign-on (OpenID Connect): the providers of SVC_OIDC_PROVIDERS, the tunnel host's side
// (the Gate the policy room asks through its SignIn interface), the apex's callback and JWKS, and
// the keys, one-time tickets and signed-out sessions all nodes share through the store.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Logger } from 'pino';
import type { OidcProviderConfig } from '../config.js';
import type { SignIn } from '../policy/index.js';
import type { OidcRepo } from '../store/index.js';
import { createApexSignIn } from './apex.js';
import { Gate } from './gate.js';
import { IdentityTokens } from './identity-tokens.js';
import { KeyRing } from './key-ring.js';
import { jwksMaxAgeSeconds } from './key-schedule.js';
import { loadCookieKey } from './keys.js';
import { Providers } from './providers.js';
import { Revocations } from './revocations.js';
import { SessionCookies } from './session-cookie.js';
import type { Sealer } from './signing-keys.js';
import { Tickets } from './tickets.js';

export { JWKS_PATH } from './apex.js';
export { LOGOUT_PATH, RETURN_PATH } from './gate.js';
export { SESSION_COOKIE } from './session-cookie.js';
export { IDENTITY_TTL_MS } from './identity-tokens.js';
export { KEY_ACTIVATION_DELAY_MS, RETAIN_AFTER_SUCCESSOR_MS, planKeys, type KeyPlan, type KeyState } from './key-schedule.js';
export { REVOCATION_POLL_MS, REVOCATIONS_STALE_MS } from './revocations.js';
export { newSigningKey, openSigningKey, type Sealer } from './signing-keys.js';

/** How often expired tickets and revocations of expired sessions are deleted from the store. */
const PRUNE_INTERVAL_MS = 60_000;

/** Single sign-on, wired: the gate for the binder, the apex handler, and a stop for shutdown. */
export interface SingleSignOn {
  signIn: SignIn;
  /** Takes the apex requests that are the sign-in's (callback, JWKS); answers whether it did. */
  apex(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): boolean;
  close(): void;
}

/**
 * Starts single sign-on for the configured providers (none: undefined). The cookie key, the
 * signing keys and the signed-out sessions are read from the store first.
 */
export async function startSingleSignOn(options: {
  providers: readonly OidcProviderConfig[];
  sessionHours: number;
  repo: OidcRepo;
  /** The box that seals the cookie key and the private signing keys in the store (loaded only when single sign-on is on). */
  loadSealer(): Promise<Sealer>;
  /** The wait between `svc-server oidc rotate-key` and the first token signed with the new key. */
  keyActivationDelayMs: number;
  /** How long signed-in visitors are admitted without a read of the sign-outs (REVOCATIONS_STALE_MS unless configured). */
  revocationsStaleMs?: number;
  apexUrl(): string;
  log: Logger;
}): Promise<SingleSignOn | undefined> {
  if (options.providers.length === 0) return undefined;
  const log = options.log.child({ component: 'oidc' });
  const sealer = await options.loadSealer();
  const cookieKey = await loadCookieKey(options.repo, sealer);
  const ring = new KeyRing({
    repo: options.repo,
    sealer,
    activationDelayMs: options.keyActivationDelayMs,
    log,
  });
  await ring.start();
  const revocations = new Revocations({
    repo: options.repo,
    log,
    ...(options.revocationsStaleMs !== undefined ? { staleMs: options.revocationsStaleMs } : {}),
  });
  try {
    await revocations.start();
  } catch (error) {
    ring.close();
    throw error;
  }
  const providers = new Providers(options.providers);
  const tickets = new Tickets(options.repo);
  const tokens = new IdentityTokens(ring, options.apexUrl);
  const gate = new Gate({
    providers,
    tickets,
    cookies: new SessionCookies(cookieKey),
    tokens,
    revocations,
    callbackUrl: (name) => `${options.apexUrl()}/auth/oidc/${name}/callback`,
    sessionMs: options.sessionHours * 3_600_000,
    log,
  });
  const apex = createApexSignIn({
    providers,
    tickets,
    jwks: () => ring.jwks(Date.now()),
    jwksMaxAgeSeconds: jwksMaxAgeSeconds(options.keyActivationDelayMs),
    apexUrl: options.apexUrl,
    log,
  });
  const prune = setInterval(() => {
    const now = Date.now();
    options.repo.deleteExpiredTickets(now).catch((err: unknown) => log.warn({ err }, 'deleting expired sign-in tickets failed'));
    options.repo.deleteExpiredRevocations(now).catch((err: unknown) => log.warn({ err }, 'deleting old sign-outs failed'));
  }, PRUNE_INTERVAL_MS);
  prune.unref();
  return {
    signIn: gate,
    apex,
    close: () => {
      clearInterval(prune);
      ring.close();
      revocations.close();
    },
  };
}
