import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import * as client from 'openid-client';
import type { Logger } from 'pino';
import { edgePage, type EdgePage } from '../edge/index.js';
import type { Providers } from './providers.js';
import { RETURN_PATH } from './gate.js';
import { CODE_TTL_MS, type CodeTicket, type SignInTicket, type Tickets } from './tickets.js';

type ApexRequest = IncomingMessage | Http2ServerRequest;
type ApexResponse = ServerResponse | Http2ServerResponse;

/** Where the keys of X-Svc-Identity are published, on the apex. */
export const JWKS_PATH = '/.well-known/jwks.json';
const CALLBACK = /^\/auth\/oidc\/([a-z0-9][a-z0-9_-]{0,31})\/callback$/;

export interface ApexDeps {
  providers: Providers;
  tickets: Tickets;
  jwks(): string;
  /** Cache-Control max-age of the JWKS: short enough that a rotated key reaches verifiers before it signs. */
  jwksMaxAgeSeconds: number;
  /** The apex's public URL (`https://<shared domain>[:port]`). */
  apexUrl(): string;
  log: Logger;
}

/**
 * The apex's part of single sign-on: the JWKS, and the provider's callback, which checks the
 * answer (state, PKCE, nonce, the ID token), then hands the browser back to the tunnel host that
 * started the sign-in with a one-time code. Answers whether it took the request.
 */
export function createApexSignIn(deps: ApexDeps): (req: ApexRequest, res: ApexResponse) => boolean {
  return (req, res) => {
    const target = req.url ?? '/';
    const query = target.indexOf('?');
    const path = query < 0 ? target : target.slice(0, query);
    if (path === JWKS_PATH) {
      const body = deps.jwks();
      res.writeHead(200, {
        'content-type': 'application/json',
        'cache-control': `public, max-age=${deps.jwksMaxAgeSeconds}`,
        'content-length': Buffer.byteLength(body),
      });
      if (req.method === 'HEAD') res.end();
      else res.end(body);
      return true;
    }
    const match = CALLBACK.exec(path);
    if (!match || !path.startsWith('/auth/oidc/')) return false;
    void callback(deps, match[1]!, new URLSearchParams(query < 0 ? '' : target.slice(query + 1)), target)
      .catch((err: unknown) => {
        deps.log.warn({ err }, 'single sign-on callback failed');
        return edgePage(400, 'Sign-in failed', "The provider's answer could not be checked. Open the tunnel's page again to sign in.");
      })
      .then((answer) => send(res, answer));
    return true;
  };
}

async function callback(deps: ApexDeps, name: string, params: URLSearchParams, target: string): Promise<EdgePage | string> {
  if (!deps.providers.names.includes(name)) return edgePage(404, 'Unknown provider', `No sign-in provider is named ${name}.`);
  const error = params.get('error');
  if (error !== null) return edgePage(403, 'Sign-in refused', `The provider refused the sign-in (${error.slice(0, 100)}).`);
  const state = params.get('state') ?? '';
  const ticket = await deps.tickets.take<SignInTicket>('sign-in', state);
  if (ticket === undefined || ticket.provider !== name) {
    return edgePage(400, 'Sign-in expired', "This sign-in was already used or has expired. Open the tunnel's page again to sign in.");
  }
  const config = await deps.providers.configuration(name);
  const tokens = await client.authorizationCodeGrant(config, new URL(target, deps.apexUrl()), {
    pkceCodeVerifier: ticket.verifier,
    expectedState: state,
    expectedNonce: ticket.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims();
  if (claims === undefined) return edgePage(403, 'No identity', 'The provider sent no ID token.');
  let email = claims.email;
  let verified = claims.email_verified;
  // Some providers keep the email for the UserInfo endpoint (the ID token then names the subject alone).
  if (typeof email !== 'string' || email === '') {
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    email = info.email;
    verified = info.email_verified;
  }
  if (typeof email !== 'string' || email === '') {
    return edgePage(403, 'No email address', 'The provider did not say which email address you signed in with.');
  }
  if (verified === false) return edgePage(403, 'Email not verified', `The provider has not verified ${email}.`);
  const code: CodeTicket = {
    provider: name,
    host: ticket.host,
    origin: ticket.origin,
    path: ticket.path,
    browser: ticket.browser,
    sub: claims.sub,
    email,
    secure: ticket.secure,
  };
  const value = await deps.tickets.put('code', code, CODE_TTL_MS);
  return `${ticket.origin}${RETURN_PATH}?code=${value}`;
}

/** Writes a page, or a redirect to a location. */
function send(res: ApexResponse, answer: EdgePage | string): void {
  if (res.destroyed || res.headersSent) return;
  if (typeof answer === 'string') {
    res.writeHead(302, { location: answer, 'cache-control': 'no-store', 'content-length': 0 });
    res.end();
    return;
  }
  res.writeHead(answer.status, { ...answer.headers, 'cache-control': 'no-store' });
  res.end(answer.body);
}
