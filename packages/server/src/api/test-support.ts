import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createAccountWithToken, createBearerAuthenticator, DashboardSessions, SignInLimiter, type SignInLimits } from '../auth/index.js';
import { DEFAULT_PLANS } from '../config.js';
import { RequestHub } from '../inspector/index.js';
import { openStore, type Account, type Store } from '../store/index.js';
import { createApi, type Authenticate } from './api.js';
import { controlPlaneRoutes } from './api-routes.js';
import type { AnyRoute } from './router.js';
import type { DomainRouteDeps } from './routes-domains.js';
import type { WebhookRouteDeps } from './routes-webhooks.js';
import { newSigningSecret, privateAddressProblem, SecretBox } from '../webhooks/index.js';
import type { RequestStreamDeps } from './routes-request-stream.js';
import { opsRoutes, type OpsRouteDeps } from './routes-ops.js';
import { authRoutes, type SignupMode } from './routes-auth.js';

/** One account of the fixture with its first token. */
export interface FixtureAccount {
  account: Account;
  token: string;
}

/** The API on a real socket over a real SQLite store; the edge and the meter are fakes. */
export interface ApiFixture {
  url: string;
  /** The data dir holding the SQLite file (store fault tests open it from another connection). */
  dataDir: string;
  store: Store;
  a: FixtureAccount;
  b: FixtureAccount;
  /** Calls the API; `token: null` sends no Authorization header. */
  call(
    method: string,
    path: string,
    options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: unknown; text: string; headers: Headers }>;
  /** Fake edge state: live tunnels (id → account id), dropped key sessions, released tunnels. */
  live: Map<string, string>;
  dropped: Array<{ keyId: string; message: string }>;
  released: string[];
  /** Fake meter: bytes this month per account id. */
  meterBytes: Map<string, number>;
  /** The live feed of GET /v1/requests/stream; tests publish stored batches to it. */
  liveRequests: RequestHub;
  /** Every log line the API wrote (JSON). */
  logLines: string[];
  routes: AnyRoute[];
  close(): Promise<void>;
}

/** Knobs of startApiFixture. */
export interface ApiFixtureOptions {
  /** Overrides the readiness/metrics fakes. */
  ops?: Partial<OpsRouteDeps>;
  /** Appended to the route table. */
  extraRoutes?: AnyRoute[];
  /** Replaces token checking (e.g. to keep a caller authenticated while its key is revoked). */
  authenticate?: (store: Store, accounts: { a: FixtureAccount; b: FixtureAccount }) => Authenticate;
  /** What the routes see as the store (e.g. with slowed-down reads); default the real one. */
  routeStore?: (store: Store) => Store;
  /** SVC_SIGNUP; default open. */
  signup?: SignupMode;
  /** Failed sign-in limits; default the server's. */
  signInLimits?: SignInLimits;
  /** Domain route settings; default shared domain `svc.test`, resolvers at 127.0.0.1:53, no edge target. */
  domains?: Partial<Omit<DomainRouteDeps, 'store' | 'limitsFor'>>;
  /** Stream limits (keep-alive interval, queue bound). */
  requestStream?: RequestStreamDeps['requestStream'];
  /** Webhook settings; default private receivers refused, secrets sealed under a random key, wake a no-op. */
  webhooks?: Partial<WebhookRouteDeps['webhookAdmin']>;
}

/** Starts the fixture. */
export async function startApiFixture(options: ApiFixtureOptions = {}): Promise<ApiFixture> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-api-'));
  const store = await openStore({ dataDir: dir });
  const a = await createAccountWithToken(store, { email: `a-${path.basename(dir)}@example.com`, name: 'Ann' });
  const b = await createAccountWithToken(store, { email: `b-${path.basename(dir)}@example.com`, name: 'Bob', plan: 'pro' });
  const live = new Map<string, string>();
  const dropped: ApiFixture['dropped'] = [];
  const released: string[] = [];
  const meterBytes = new Map<string, number>();
  const logLines: string[] = [];
  const liveRequests = new RequestHub();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const log = pino({ level: 'trace' }, sink);
  const sessions = new DashboardSessions(store);
  const limiter = new SignInLimiter(options.signInLimits);
  const box = new SecretBox(randomBytes(32));
  const routes: AnyRoute[] = [
    ...authRoutes({ store, sessions, limiter, signup: options.signup ?? 'open' }),
    ...controlPlaneRoutes({
      limiter,
      store: options.routeStore?.(store) ?? store,
      publicUrl: (host) => `https://${host}:8443`,
      releaseTunnel: (id) => void released.push(id),
      isLive: (id) => live.has(id),
      limitsFor: (plan) => DEFAULT_PLANS[plan],
      liveTunnels: (accountId) => [...live.values()].filter((owner) => owner === accountId).length,
      meter: { usedBytes: (accountId) => meterBytes.get(accountId) ?? 0 },
      dropSessionsOfKey: (keyId, message) => {
        dropped.push({ keyId, message });
        return 1;
      },
      sharedDomain: 'svc.test',
      dnsServers: ['127.0.0.1:53'],
      liveRequests,
      requestStream: options.requestStream,
      webhookAdmin: {
        allowPrivate: false,
        privateAddressProblem,
        newSecret: () => {
          const secret = newSigningSecret();
          return { secret, sealed: box.seal(secret) };
        },
        wake: () => undefined,
        ...options.webhooks,
      },
      ...options.domains,
    }),
    ...opsRoutes({ pingStore: () => store.accounts.byId('acc_probe'), listening: () => true, ...options.ops }),
    ...(options.extraRoutes ?? []),
  ];
  const authenticate = options.authenticate?.(store, { a, b }) ?? createBearerAuthenticator(store);
  const server = http.createServer(createApi({ authenticate, resolveSession: (value) => sessions.resolve(value), routes, log }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    dataDir: dir,
    store,
    a,
    b,
    live,
    dropped,
    released,
    meterBytes,
    liveRequests,
    logLines,
    routes,
    async call(method, target, { token = a.token, body, headers = {} } = {}) {
      const all: Record<string, string> = { ...headers };
      if (token !== null) all.authorization = `Bearer ${token}`;
      if (body !== undefined && !all['content-type']) all['content-type'] = 'application/json';
      const init: RequestInit = { method, headers: all };
      if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
      const response = await fetch(`${url}${target}`, init);
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: response.status, body: parsed, text, headers: response.headers };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
