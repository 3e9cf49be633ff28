import { sameText } from '@svcrouter/protocol';
import * as client from 'openid-client';
import type { Logger } from 'pino';
import { edgePage, normalizeHost } from '../edge/index.js';
import type { AccessRequest, Identity, Reply, SignIn, SignInRules } from '../policy/index.js';
import type { IdentityTokens } from './identity-tokens.js';
import type { Providers } from './providers.js';
import type { Revocations } from './revocations.js';
import {
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  cookieOf,
  edgeCookieName,
  setCookie,
  type Session,
  type SessionCookies,
} from './session-cookie.js';
import { SIGN_IN_TTL_MS, digest, ownerDigest, randomToken, type CodeTicket, type SignInTicket, type Tickets } from './tickets.js';

/** Paths on a tunnel host that the edge answers itself when the tunnel has single sign-on. */
export const LOGOUT_PATH = '/.svc/logout';
export const RETURN_PATH = '/.svc/oidc/return';
/** Account digests remembered; past it the memo starts over. */
const MAX_OWNER_TAGS = 10_000;

export interface GateDeps {
  providers: Providers;
  tickets: Tickets;
  cookies: SessionCookies;
  tokens: IdentityTokens;
  /** Sessions signed out before their time (every node's, polled from the store). */
  revocations: Revocations;
  /** The provider's redirect URI: `<apex>/auth/oidc/<name>/callback`. */
  callbackUrl(provider: string): string;
  sessionMs: number;
  log: Logger;
  now?: () => number;
}

/**
 * Single sign-on on a tunnel host. A request with a good session cookie passes with its identity
 * (or gets 403 when no allow rule matches); without one, a browser navigation is sent to the
 * provider (authorization code with PKCE, the callback on the apex) and anything else gets a JSON
 * 401. The apex sends the browser back with a one-time code to RETURN_PATH, which sets the
 * session cookie on this host alone. Only the sign-in's start and end touch the store.
 */
export class Gate implements SignIn {
  readonly providers: readonly string[];
  private readonly now: () => number;
  private readonly ownerTags = new Map<string, string>();

  constructor(private readonly deps: GateDeps) {
    this.providers = deps.providers.names;
    this.now = deps.now ?? Date.now;
  }

  admit(request: AccessRequest, rules: SignInRules): Identity | Reply | Promise<Identity | Reply> {
    if (request.path.startsWith('/.svc/')) {
      const pathname = pathOnly(request.path);
      if (pathname === LOGOUT_PATH) return this.logout(request);
      if (pathname === RETURN_PATH) return this.guard(this.finish(request, rules));
    }
    const cookie = cookieOf(request.headers, edgeCookieName(SESSION_COOKIE, request.secure));
    const now = this.now();
    const session = cookie === undefined ? undefined : this.deps.cookies.open(cookie, request.host, now);
    // A session of another provider or account (the host was bound again) or signed out is no session.
    if (
      session !== undefined &&
      session.provider === rules.provider &&
      session.owner === this.ownerTag(rules.owner) &&
      !this.deps.revocations.has(session.id)
    ) {
      // Fail closed: without a recent read of the sign-outs, this one may have been signed out elsewhere.
      if (!this.deps.revocations.current(now)) return unavailable(this.deps.revocations.staleSeconds(now));
      // The allow rules are the tunnel's of this moment, checked on every request: a tunnel bound
      // again with other rules checks the identity against those.
      if (!allowed(session.email, rules)) return forbidden(session.email);
      return { token: this.deps.tokens.tokenFor(cookie!, session, now), email: session.email };
    }
    if (!isNavigation(request)) return unauthorized();
    return this.guard(this.start(request, rules.provider));
  }

  /** Starts a sign-in: stores its state and PKCE verifier, sends the browser to the provider. */
  private async start(request: AccessRequest, provider: string): Promise<Reply> {
    const config = await this.deps.providers.configuration(provider);
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const browser = randomToken();
    const ticket: SignInTicket = {
      provider,
      host: request.host,
      origin: originOf(request),
      // Origin-form always: the browser comes back to this path on this host, whatever it holds.
      path: request.path.startsWith('/') ? request.path : '/',
      verifier,
      nonce,
      browser: digest(browser),
      secure: request.secure,
    };
    const state = await this.deps.tickets.put('sign-in', ticket, SIGN_IN_TTL_MS);
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.deps.callbackUrl(provider),
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return redirect(url.href, setCookie(SIGN_IN_COOKIE, browser, SIGN_IN_TTL_MS / 1000, request.secure, RETURN_PATH));
  }

  /** Ends a sign-in on the tunnel host: takes the one-time code, sets the session cookie, goes on to the path. */
  private async finish(request: AccessRequest, rules: SignInRules): Promise<Reply> {
    const code = new URLSearchParams(request.path.slice(request.path.indexOf('?') + 1)).get('code') ?? '';
    const ticket = await this.deps.tickets.take<CodeTicket>('code', code);
    if (ticket === undefined || ticket.host !== request.host) {
      return edgePage(400, 'Sign-in link not valid', 'This sign-in link was already used or has expired. Open the page again to sign in.');
    }
    const browser = cookieOf(request.headers, edgeCookieName(SIGN_IN_COOKIE, request.secure));
    if (browser === undefined || !sameText(digest(browser), ticket.browser)) {
      return edgePage(400, 'Sign-in not valid', 'This sign-in was started in another browser. Open the page again to sign in.');
    }
    const session: Session = {
      id: randomToken(),
      host: ticket.host,
      provider: ticket.provider,
      owner: this.ownerTag(rules.owner),
      sub: ticket.sub,
      email: ticket.email,
      expiresAt: this.now() + this.deps.sessionMs,
    };
    const value = this.deps.cookies.seal(session);
    // The recorded origin is this host's own (checked above): the path never leaves it.
    return redirect(`${ticket.origin}${ticket.path}`, setCookie(SESSION_COOKIE, value, this.deps.sessionMs / 1000, ticket.secure));
  }

  /**
   * Ends the session on every node: its id is stored as signed out (the cookie, and any copy of
   * it, is refused from then on), then the cookie is cleared. When the store cannot take it, the
   * cookie is kept, so the visitor can try again, and the page says so.
   */
  private logout(request: AccessRequest): Reply | Promise<Reply> {
    const cookie = cookieOf(request.headers, edgeCookieName(SESSION_COOKIE, request.secure));
    const session = cookie === undefined ? undefined : this.deps.cookies.open(cookie, request.host, this.now());
    if (session === undefined || this.deps.revocations.has(session.id)) return signedOut(request.secure);
    return this.deps.revocations.revoke(session.id, session.expiresAt).then(
      () => {
        this.deps.tokens.forget(cookie!);
        return signedOut(request.secure);
      },
      (err: unknown) => {
        this.deps.log.warn({ err }, 'storing a sign-out failed');
        const page = edgePage(503, 'Sign-out unavailable', 'Your session could not be ended right now. Try signing out again in a moment.');
        page.headers['cache-control'] = 'no-store';
        page.headers['retry-after'] = '5';
        return page;
      },
    );
  }

  /** ownerDigest, memoised: the request path does a map lookup. */
  private ownerTag(owner: string): string {
    let tag = this.ownerTags.get(owner);
    if (tag === undefined) {
      tag = ownerDigest(owner);
      if (this.ownerTags.size >= MAX_OWNER_TAGS) this.ownerTags.clear();
      this.ownerTags.set(owner, tag);
    }
    return tag;
  }

  /** A sign-in step that fails (the store or the provider out) answers 503, never a 500. */
  private guard(step: Promise<Reply>): Promise<Reply> {
    return step.catch((err: unknown) => {
      this.deps.log.warn({ err }, 'single sign-on step failed');
      return edgePage(503, 'Sign-in unavailable', 'Signing in is not possible right now. Try again in a moment.');
    });
  }
}

/** Whether a signed-in email passes the tunnel's allow rules (none: every signed-in visitor). */
export function allowed(email: string, rules: SignInRules): boolean {
  if (rules.emails.size === 0 && rules.domains.size === 0) return true;
  const lower = email.toLowerCase();
  return rules.emails.has(lower) || rules.domains.has(lower.slice(lower.lastIndexOf('@') + 1));
}

/** A browser navigation: GET or HEAD that accepts HTML. Other requests (fetch, API clients) get 401. */
function isNavigation(request: AccessRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const headers = request.headers;
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase() === 'accept' && headers[i + 1]!.includes('text/html')) return true;
  }
  return false;
}

/** The scheme, host and port the visitor used: its Host when it names this host, else the host alone. */
function originOf(request: AccessRequest): string {
  const scheme = request.secure ? 'https' : 'http';
  const headers = request.headers;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!.toLowerCase();
    if (name !== 'host' && name !== ':authority') continue;
    const authority = headers[i + 1]!;
    if (normalizeHost(authority) === request.host && /^[a-z0-9.-]+(:\d{1,5})?$/i.test(authority))
      return `${scheme}://${authority.toLowerCase()}`;
  }
  return `${scheme}://${request.host}`;
}

function pathOnly(target: string): string {
  const query = target.indexOf('?');
  return query < 0 ? target : target.slice(0, query);
}

function redirect(location: string, cookie: string): Reply {
  return {
    status: 302,
    headers: {
      location,
      'set-cookie': cookie,
      'cache-control': 'no-store',
      'content-type': 'text/plain; charset=utf-8',
      'content-length': '0',
    },
    body: '',
  };
}

function unauthorized(): Reply {
  const body = JSON.stringify({ error: 'unauthorized', message: 'sign in required: open this address in a browser to sign in' });
  return {
    status: 401,
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'cache-control': 'no-store' },
    body,
  };
}

function forbidden(email: string): Reply {
  const page = edgePage(
    403,
    'Access denied',
    `You are signed in as ${email}, which may not reach this tunnel. Sign out at ${LOGOUT_PATH}.`,
  );
  page.headers['cache-control'] = 'no-store';
  return page;
}

function unavailable(staleSeconds: number): Reply {
  const page = edgePage(
    503,
    'Sign-in check unavailable',
    `This tunnel cannot check signed-in sessions right now (the list of signed-out sessions has not been read for ${staleSeconds} s). Try again in a moment.`,
  );
  page.headers['cache-control'] = 'no-store';
  page.headers['retry-after'] = '5';
  return page;
}

function signedOut(secure: boolean): Reply {
  const page = edgePage(200, 'Signed out', 'You are signed out of this tunnel.');
  page.headers['set-cookie'] = setCookie(SESSION_COOKIE, '', 0, secure);
  page.headers['cache-control'] = 'no-store';
  return page;
}
