import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { startAgent, startOrigin, startServer, visit, type TestAgent, type TestOrigin, type TestServer } from './harness/index.js';
import { assertDocumented, eventually, openApi, type ApiAnswer, type OpenApiDoc } from './harness/api-helpers.js';

// Dashboard sign-in against a real svc-server process: the /auth endpoints, the session cookie
// standing in for a token on /v1, the CSRF rule, rate limits, the first-start link, the CLI, and
// the cookie's scope (host-only, Secure over TLS).

type Json = Record<string, unknown>;

/** A signed-in browser: its cookie pair and CSRF token. */
interface Browser {
  cookie: string;
  csrf: string;
}

const CSRF_REFUSED = { error: 'csrf_failed', message: 'missing or invalid X-CSRF-Token header; reload the dashboard' };

/** Calls the apex with optional cookie, CSRF token and extra headers; checks the answer against OpenAPI. */
async function request(
  server: TestServer,
  doc: OpenApiDoc | undefined,
  method: string,
  path: string,
  options: { browser?: Browser; csrf?: boolean; headers?: Record<string, string>; body?: unknown } = {},
): Promise<ApiAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.browser) headers.cookie = options.browser.cookie;
  if (options.browser && options.csrf) headers['x-csrf-token'] = options.browser.csrf;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  const answer = { status: response.status, headers: response.headers, text, body: text ? (JSON.parse(text) as unknown) : undefined };
  if (doc) assertDocumented(doc, method, path, answer);
  return answer;
}

/** The browser a sign-in answer creates. */
function browserOf(answer: ApiAnswer): Browser {
  const setCookie = answer.headers.get('set-cookie') ?? '';
  const pair = setCookie.split(';')[0]!;
  assert.match(pair, /^svc_session=svs_[A-Za-z0-9_-]{43}$/, setCookie);
  return { cookie: pair, csrf: (answer.body as { csrfToken: string }).csrfToken };
}

describe('dashboard sign-in (open sign-up)', () => {
  let server: TestServer;
  let doc: OpenApiDoc;
  let firstStartLink: string;
  const call = (method: string, path: string, options?: Parameters<typeof request>[4]) => request(server, doc, method, path, options);
  const signUp = async (email: string, password = 'a long password'): Promise<Browser> => {
    const answer = await call('POST', '/auth/signup', { body: { email, password } });
    assert.equal(answer.status, 201, answer.text);
    return browserOf(answer);
  };

  before(async () => {
    server = await startServer();
    firstStartLink = (await server.proc.waitForLine(/^\s+(http:\/\/localhost:\d+\/welcome#token=svl_[A-Za-z0-9_-]{43})$/))[1]!;
    doc = await openApi(server);
  });
  after(async () => {
    await server?.close();
  });

  it('the first start prints a one-time link that signs the local account in once and only once', async () => {
    assert.ok(firstStartLink.startsWith(`${server.url}/welcome#token=`), firstStartLink);
    assert.ok(
      server.proc.lines.some((line) => /valid for 30 minutes/.test(line)),
      'the validity is printed',
    );
    const token = firstStartLink.split('#token=')[1]!;
    const used = await call('POST', '/auth/link', { body: { token, password: 'local password' } });
    assert.equal(used.status, 200, used.text);
    const browser = browserOf(used);
    assert.equal(((used.body as Json).account as Json).email, 'local@svcrouter.localhost');
    assert.equal(((await call('GET', '/v1/me', { browser })).body as Json).email, 'local@svcrouter.localhost');
    const again = await call('POST', '/auth/link', { body: { token, password: 'another password' } });
    assert.deepEqual([again.status, (again.body as Json).error], [400, 'link_invalid']);
    const signIn = await call('POST', '/auth/signin', { body: { email: 'local@svcrouter.localhost', password: 'local password' } });
    assert.equal(signIn.status, 200, 'the password the link set works');
  });

  it('sign-up, sign-in and sign-out; the cookie works on GET /v1/me and is refused after sign-out', async () => {
    const signedUp = await signUp('dana@example.com', 'dana password');
    assert.deepEqual(((await call('GET', '/auth/session', { browser: signedUp })).body as Json).signedIn, true);
    const signIn = await call('POST', '/auth/signin', { body: { email: 'Dana@Example.com', password: 'dana password' } });
    assert.equal(signIn.status, 200);
    const browser = browserOf(signIn);
    assert.equal(((await call('GET', '/v1/me', { browser })).body as Json).email, 'dana@example.com');
    const out = await call('POST', '/auth/signout', { browser, csrf: true });
    assert.equal(out.status, 204);
    assert.match(out.headers.get('set-cookie') ?? '', /^svc_session=;.*Max-Age=0/);
    const refused = await call('GET', '/v1/me', { browser });
    assert.deepEqual([refused.status, refused.body], [401, { error: 'unauthorized' }]);
    assert.deepEqual((await call('GET', '/auth/session', { browser })).body, { signedIn: false, signup: 'open' });
    assert.equal((await call('GET', '/v1/me', { browser: signedUp })).status, 200, 'the other browser stays signed in');
  });

  it('a wrong password fails with the message; five failures answer 429 with Retry-After', async () => {
    await signUp('erin@example.com', 'erin password');
    for (let i = 0; i < 5; i++) {
      const wrong = await call('POST', '/auth/signin', { body: { email: 'erin@example.com', password: `wrong password ${i}` } });
      assert.deepEqual([wrong.status, wrong.body], [401, { error: 'invalid_credentials', message: 'wrong email or password' }]);
    }
    const blocked = await call('POST', '/auth/signin', { body: { email: 'erin@example.com', password: 'erin password' } });
    assert.equal(blocked.status, 429);
    assert.deepEqual(blocked.body, { error: 'too_many_attempts', message: 'too many failed sign-ins; try again in 15 minutes' });
    const retryAfter = Number(blocked.headers.get('retry-after'));
    assert.ok(retryAfter > 14 * 60 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`);
  });

  it('a cookie POST or DELETE without X-CSRF-Token, or from a foreign Origin, is refused with 403', async () => {
    const browser = await signUp('fay@example.com');
    const created = await call('POST', '/v1/keys', { browser, csrf: true, headers: { origin: server.url }, body: { description: 'fay' } });
    assert.equal(created.status, 201, created.text);
    const keyId = (created.body as Json).id as string;
    assert.deepEqual((await call('POST', '/v1/keys', { browser, body: { description: 'no csrf' } })).body, CSRF_REFUSED);
    assert.deepEqual((await call('DELETE', `/v1/keys/${keyId}`, { browser })).body, CSRF_REFUSED);
    const foreign = await call('DELETE', `/v1/keys/${keyId}`, {
      browser,
      csrf: true,
      headers: { origin: `http://evil.localhost:${server.httpPort}` },
    });
    assert.deepEqual([foreign.status, foreign.body], [403, CSRF_REFUSED]);
    assert.equal((await call('GET', '/v1/keys', { browser })).text.includes(keyId), true, 'the key survived every refused call');
    // Fay has a password, so even her last key may go.
    assert.equal((await call('DELETE', `/v1/keys/${keyId}`, { browser, csrf: true })).status, 204);
  });

  it('account password --email via stdin sets a password that signs in', async () => {
    const token = await server.createAccount('gus@example.com');
    const set = await server.cli(['account', 'password', '--email', 'gus@example.com'], 'gus cli password\n');
    assert.equal(set.code, 0, set.stderr);
    assert.ok(!set.stdout.includes('gus cli password') && !set.stderr.includes('gus cli password'), 'the password is not echoed');
    const signIn = await call('POST', '/auth/signin', { body: { email: 'gus@example.com', password: 'gus cli password' } });
    assert.equal(signIn.status, 200, signIn.text);
    const short = await server.cli(['account', 'password', '--email', 'gus@example.com'], 'short\n');
    assert.deepEqual([short.code, short.stderr.trim()], [2, 'svc-server account password: password must be at least 8 characters']);
    // The account's token is untouched.
    assert.equal((await request(server, doc, 'GET', '/v1/me', { headers: { authorization: `Bearer ${token}` } })).status, 200);
  });

  it('account link --email prints a fresh one-time link', async () => {
    await server.createAccount('hal@example.com');
    const printed = await server.cli(['account', 'link', '--email', 'hal@example.com']);
    assert.equal(printed.code, 0, printed.stderr);
    const token = /#token=(svl_[A-Za-z0-9_-]{43})/.exec(printed.stdout)?.[1];
    assert.ok(token, printed.stdout);
    assert.equal((await call('POST', '/auth/link', { body: { token, password: 'hal link password' } })).status, 200);
  });

  it('the session cookie is host-only (no Domain), HttpOnly, SameSite=Lax, and Secure over HTTPS (HTTP/1.1 and HTTP/2)', async () => {
    const plain = await call('POST', '/auth/signin', { body: { email: 'dana@example.com', password: 'dana password' } });
    const plainCookie = plain.headers.get('set-cookie')!;
    assert.match(plainCookie, /; Path=\/; HttpOnly; SameSite=Lax; Max-Age=1209600$/);
    assert.doesNotMatch(plainCookie, /domain=/i);
    assert.doesNotMatch(plainCookie, /secure/i, 'no Secure over plain HTTP');

    const body = JSON.stringify({ email: 'dana@example.com', password: 'dana password' });
    const h1 = await visit(server, 'localhost', '/auth/signin', {
      secure: true,
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(h1.status, 200, h1.text);
    const h1Cookie = String(h1.headers['set-cookie']);
    assert.match(h1Cookie, /^__Host-svc_session=svs_[A-Za-z0-9_-]{43}; Path=\/; .*; Secure$/);
    assert.doesNotMatch(h1Cookie, /domain=/i);

    const session = http2.connect(`https://localhost:${server.httpsPort}`, { ca: server.caPem });
    // A reset of the connection as it closes, after the answer was read, is no failure here; a
    // session error before the answer reaches the stream's 'error' below.
    session.on('error', () => undefined);
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/auth/signin', 'content-type': 'application/json' });
      stream.end(body);
      const [headers] = (await new Promise((resolve, reject) => {
        stream.once('response', (h) => resolve([h]));
        stream.once('error', reject);
      })) as [http2.IncomingHttpHeaders];
      stream.resume();
      assert.equal(headers[':status'], 200);
      assert.match(String(headers['set-cookie']), /^__Host-svc_session=.*; Secure$/);
    } finally {
      session.close();
    }
  });

  it('a session cookie a tunnel host could have set signs nobody in: the plain name over HTTPS, a second one over HTTP', async () => {
    const body = JSON.stringify({ email: 'dana@example.com', password: 'dana password' });
    const signedIn = await visit(server, 'localhost', '/auth/signin', {
      secure: true,
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    const value = /^__Host-svc_session=([^;]+)/.exec(String(signedIn.headers['set-cookie']))![1]!;
    const state = async (secure: boolean, cookie: string): Promise<boolean> => {
      const answer = await visit(server, 'localhost', '/auth/session', { secure, headers: { cookie } });
      assert.equal(answer.status, 200, answer.text);
      return (JSON.parse(answer.text) as { signedIn: boolean }).signedIn;
    };
    assert.equal(await state(true, `__Host-svc_session=${value}`), true);
    // Any host of the shared domain can set a plain-named cookie with Domain=<apex>; none can set a __Host- one.
    assert.equal(await state(true, `svc_session=${value}`), false);
    const plain = browserOf(await call('POST', '/auth/signin', { body: { email: 'dana@example.com', password: 'dana password' } }));
    const other = browserOf(await call('POST', '/auth/signup', { body: { email: 'tosser@example.com', password: 'tosser password' } }));
    assert.equal(await state(false, plain.cookie), true);
    assert.equal(await state(false, `${other.cookie}; ${plain.cookie}`), false, 'two session cookies: neither is trusted');
    const tunnels = await call('GET', '/v1/tunnels', { headers: { cookie: `${other.cookie}; ${plain.cookie}` } });
    assert.equal(tunnels.status, 401, tunnels.text);
  });
});

describe('dashboard sign-in: one account session never reaches another account or a tunnel', () => {
  let server: TestServer;
  let origin: TestOrigin;
  let agent: TestAgent;
  let doc: OpenApiDoc;
  let owner: Browser;
  let other: Browser;
  const ids: { tunnel: string; key: string; domain: string; request: string } = { tunnel: '', key: '', domain: '', request: '' };
  const call = (method: string, path: string, options?: Parameters<typeof request>[4]) => request(server, doc, method, path, options);

  before(async () => {
    server = await startServer();
    doc = await openApi(server);
    origin = await startOrigin();
    owner = browserOf(await call('POST', '/auth/signup', { body: { email: 'owner@example.com', password: 'owner password' } }));
    const key = await call('POST', '/v1/keys', { browser: owner, csrf: true, body: { description: 'owner agent' } });
    ids.key = (key.body as Json).id as string;
    agent = await startAgent(server, { token: (key.body as Json).token as string, target: origin.port, subdomain: 'owner-app' });
    ids.tunnel = ((await call('GET', '/v1/tunnels', { browser: owner })).body as { tunnels: Json[] }).tunnels[0]!.id as string;
    const domain = await call('POST', '/v1/domains', { browser: owner, csrf: true, body: { host: 'owner-domain.example.com' } });
    assert.equal(domain.status, 201, domain.text);
    ids.domain = (domain.body as Json).id as string;
    await visit(server, agent.hostname, '/echo', { headers: { cookie: 'theme=dark' } });
    const requests = await eventually(
      () => call('GET', '/v1/requests', { browser: owner }),
      (r) => (r.body as { requests: Json[] }).requests.length > 0,
      "the owner's request captured",
    );
    ids.request = (requests.body as { requests: Json[] }).requests[0]!.id as string;
    other = browserOf(await call('POST', '/auth/signup', { body: { email: 'other@example.com', password: 'other password' } }));
  });
  after(async () => {
    await agent?.close();
    await origin?.close();
    await server?.close();
  });

  it("lists show none of the owner's tunnels, requests, domains or keys", async () => {
    for (const [path, field] of [
      ['/v1/tunnels', 'tunnels'],
      ['/v1/requests', 'requests'],
      ['/v1/domains', 'domains'],
      ['/v1/keys', 'keys'],
    ] as const) {
      const answer = await call('GET', path, { browser: other });
      assert.equal(answer.status, 200);
      assert.deepEqual((answer.body as Json)[field], [], path);
    }
  });

  it("deleting the owner's tunnel, domain or key with the other session answers 404 and changes nothing", async () => {
    for (const path of [`/v1/tunnels/${ids.tunnel}`, `/v1/domains/${ids.domain}`, `/v1/keys/${ids.key}`]) {
      const answer = await call('DELETE', path, { browser: other, csrf: true });
      assert.equal(answer.status, 404, `${path}: ${answer.text}`);
    }
    assert.equal(((await call('GET', '/v1/tunnels', { browser: owner })).body as { tunnels: Json[] }).tunnels.length, 1);
    assert.equal(((await call('GET', '/v1/domains', { browser: owner })).body as { domains: Json[] }).domains.length, 1);
    assert.equal(((await call('GET', '/v1/keys', { browser: owner })).body as { keys: Json[] }).keys.length, 1);
    assert.equal((await visit(server, agent.hostname, '/status/200')).status, 200, 'the tunnel still serves');
  });

  it('the session cookie is scoped to the apex: the tunnel host gets no cookie the apex set', async () => {
    // A browser keeps a cookie without a Domain attribute for the exact host that set it
    // (RFC 6265 host-only), so requests to <name>.localhost never carry it. What the local
    // service received came only from the visitor's own cookie for that host.
    const signIn = await call('POST', '/auth/signin', { body: { email: 'owner@example.com', password: 'owner password' } });
    assert.doesNotMatch(signIn.headers.get('set-cookie')!, /domain=/i);
    const seen = origin.seen.filter((r) => r.url === '/echo');
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.headers.cookie, 'theme=dark');
  });
});

describe('dashboard sign-in with SVC_SIGNUP=closed', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { SVC_SIGNUP: 'closed' } });
  });
  after(async () => {
    await server?.close();
  });

  it('refuses sign-up with 403 signup_closed; accounts made with the CLI still sign in', async () => {
    const doc = await openApi(server);
    const refused = await request(server, doc, 'POST', '/auth/signup', { body: { email: 'ivy@example.com', password: 'ivy password' } });
    assert.deepEqual(
      [refused.status, refused.body],
      [403, { error: 'signup_closed', message: 'sign-up is closed on this server; ask its operator for an account' }],
    );
    assert.deepEqual((await request(server, doc, 'GET', '/auth/session')).body, { signedIn: false, signup: 'closed' });
    const created = await server.cli(['account', 'create', '--email', 'ivy@example.com', '--password-stdin'], 'ivy password\n');
    assert.equal(created.code, 0, created.stderr);
    const signIn = await request(server, doc, 'POST', '/auth/signin', { body: { email: 'ivy@example.com', password: 'ivy password' } });
    assert.equal(signIn.status, 200, signIn.text);
  });
});
