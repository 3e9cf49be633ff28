import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify, type JWTPayload, type RemoteJWKSetOptions } from 'jose';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';

/** The client the test IdP knows svc-server as. */
export const CLIENT_ID = 'svc-router';
export const CLIENT_SECRET = 'svc-router-client-secret';

/** A real OpenID Connect provider (the `oidc-provider` package) on a loopback port. */
export interface TestIdp {
  issuer: string;
  /** SVC_OIDC_PROVIDERS for a provider of this name. */
  providersEnv(name: string): string;
  /** Starts answering, with svc-server's callback(s) registered as redirect URIs. */
  serve(redirectUris: string[]): void;
  close(): Promise<void>;
}

/**
 * Starts the IdP's listener first (its port is the issuer), then `serve` mounts the provider once
 * svc-server's HTTPS port, and so the callback URL, is known. The account is whatever is typed as
 * the login, with that as its (verified) email: the dev interactions ask for no real password.
 */
export async function startIdp(): Promise<TestIdp> {
  let handler: http.RequestListener | undefined;
  const server = http.createServer((req, res) => {
    if (handler) handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    providersEnv: (name) => JSON.stringify([{ name, issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }]),
    serve(redirectUris) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: CLIENT_ID,
            client_secret: CLIENT_SECRET,
            redirect_uris: redirectUris,
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
        ],
        async findAccount(_ctx, id) {
          return { accountId: id, claims: () => ({ sub: id, email: id, email_verified: true }) };
        },
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        features: { devInteractions: { enabled: true } },
        cookies: { keys: ['oidc-test-cookie-key'] },
      });
      const callback = provider.callback();
      handler = (req, res) => void callback(req, res);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the identity-checking origin answers: the headers it got and what it made of X-Svc-Identity. */
export interface IdentityEcho {
  path: string;
  headers: http.IncomingHttpHeaders;
  identity: JWTPayload | null;
  error: string | null;
  /** The origin's name, when it was given one (to tell several apart). */
  name?: string | undefined;
}

/**
 * A local service that checks who calls it, as docs/access.md shows: X-Svc-Identity verified with
 * `jose` against the apex's JWKS (issuer the apex, audience its own public host). `options.jwks`
 * tunes jose's JWKS cache; `options.name` is echoed back.
 */
export async function startIdentityOrigin(
  jwksUrl: string,
  issuer: string,
  options: { jwks?: RemoteJWKSetOptions; name?: string } = {},
): Promise<{ port: number; close(): Promise<void> }> {
  const jwks = createRemoteJWKSet(new URL(jwksUrl), options.jwks);
  const server = http.createServer((req, res) => {
    void (async () => {
      const echo: IdentityEcho = { path: req.url ?? '', headers: req.headers, identity: null, error: null, name: options.name };
      const token = req.headers['x-svc-identity'];
      if (typeof token === 'string') {
        try {
          const host = String(req.headers['x-forwarded-host'] ?? '').replace(/:\d+$/, '');
          echo.identity = (await jwtVerify(token, jwks, { issuer, audience: host, algorithms: ['ES256'], maxTokenAge: '5m' })).payload;
        } catch (error) {
          echo.error = (error as Error).message;
        }
      }
      const body = JSON.stringify(echo);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Signs in at the IdP's login page the browser was sent to (dev interactions: a login form, then
 * a consent form), and waits until the browser is back on `host`.
 */
export async function signInAtIdp(page: Page, issuer: string, email: string, host: string): Promise<void> {
  await page.waitForURL((url) => url.href.startsWith(issuer));
  await page.fill('input[name="login"]', email);
  await page.fill('input[name="password"]', 'any-password');
  // The login form, then the consent form (asked once per account and client) until back on `host`.
  for (let step = 0; step < 3 && new URL(page.url()).hostname !== host; step++) {
    const before = page.url();
    await Promise.all([page.waitForURL((url) => url.href !== before), page.click('button[type="submit"]')]);
    await page.waitForLoadState('load');
  }
  if (new URL(page.url()).hostname !== host) {
    throw new Error(`sign-in did not come back to ${host}: at ${page.url()}: ${(await page.locator('body').innerText()).slice(0, 300)}`);
  }
}

/** The JSON an identity origin answered, as the browser shows it. */
export async function echoOf(page: Page): Promise<IdentityEcho> {
  return JSON.parse(await page.locator('body').innerText()) as IdentityEcho;
}
