import { hostname as osHostname } from 'node:os';
import type { Logger } from 'pino';
import { createApi, coreRoutes, sendJson } from './api/index.js';
import { readFile } from 'node:fs/promises';
import { createBearerAuthenticator } from './auth/index.js';
import { createSniResolver, loadOrCreateDevCa, type DevCa } from './certs/index.js';
import type { ServerConfig } from './config.js';
import { Edge, startListeners, type Exchange } from './edge/index.js';
import { openStore, type Store } from './store/index.js';

/** A running svc-server. */
export interface RunningServer {
  httpPort: number;
  httpsPort: number;
  store: Store;
  edge: Edge;
  devCa: DevCa | undefined;
  /** Public URL of a tunnel hostname. */
  publicUrl(hostname: string): string;
  /** Graceful stop: agents are told, listeners closed, the store flushed and closed. */
  close(): Promise<void>;
}

/** Extra wiring points for later features (inspector, metering); all optional. */
export interface ServerHooks {
  observe?(exchange: Exchange): void;
}

/**
 * Starts edge, REST API and listeners from a parsed config. Does not read process.env or
 * install signal handlers: main.ts does that.
 */
export async function startServer(config: ServerConfig, log: Logger, hooks: ServerHooks = {}): Promise<RunningServer> {
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const nodeId = config.nodeId ?? osHostname();
  const stale = await store.tunnels.markAllOfflineForNode(nodeId);
  if (stale > 0) log.info({ count: stale }, 'tunnels left online by a previous run marked offline');

  const devCa = config.tlsCert ? undefined : await loadOrCreateDevCa(config.dataDir);
  const sni = createSniResolver({
    sharedDomain: config.sharedDomain,
    devCa,
    staticCert:
      config.tlsCert && config.tlsKey
        ? { certPem: await readFile(config.tlsCert, 'utf8'), keyPem: await readFile(config.tlsKey, 'utf8') }
        : undefined,
    isServedHost: () => false,
  });

  const authenticate = createBearerAuthenticator(store);
  let publicHttpsPort = config.publicHttpsPort ?? config.httpsPort;
  const publicUrl = (hostname: string): string =>
    `https://${hostname}${publicHttpsPort === 443 ? '' : `:${publicHttpsPort}`}`;

  let edge: Edge;
  const api = createApi({
    authenticate,
    log,
    routes: coreRoutes({
      store,
      publicUrl,
      releaseTunnel: (id, reason) => edge.releaseTunnel(id, reason),
      isLive: (id) => edge.router.byTunnelId(id) !== undefined,
    }),
    fallback(req, res, pathname) {
      if (pathname === '/healthz') {
        sendJson(res, 200, { status: 'ok' });
        return true;
      }
      return false;
    },
  });
  edge = new Edge({
    store,
    authenticate,
    heartbeatMs: config.heartbeatMs,
    log,
    sharedDomain: config.sharedDomain,
    nodeId,
    publicUrl,
    limitsFor: (plan) => config.plans[plan],
    apex: api,
    observe: hooks.observe,
  });

  const listeners = await startListeners(edge, {
    host: config.host,
    httpPort: config.httpPort,
    httpsPort: config.httpsPort,
    SNICallback: sni.SNICallback,
    defaultCertificate: await sni.defaultCertificate(),
  });
  if (config.publicHttpsPort === undefined) publicHttpsPort = listeners.httpsPort;
  log.info({ httpPort: listeners.httpPort, httpsPort: listeners.httpsPort, sharedDomain: config.sharedDomain }, 'edge listening');

  let closed = false;
  return {
    httpPort: listeners.httpPort,
    httpsPort: listeners.httpsPort,
    store,
    edge,
    devCa,
    publicUrl,
    async close() {
      if (closed) return;
      closed = true;
      edge.close();
      await listeners.close();
      await store.close();
    },
  };
}
