import { z } from 'zod';
import { definePublicRoute, Reply } from './define-route.js';
import type { PublicRoute } from './router.js';
import { Health, Readiness } from './schemas.js';

/** How long /readyz waits for the store before calling it unavailable. */
export const READY_STORE_TIMEOUT_MS = 2000;
/** Content type of the Prometheus text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** What the operational endpoints need. */
export interface OpsRouteDeps {
  /** A trivial store query; rejects (or hangs) when the store is unreachable. */
  pingStore(): Promise<unknown>;
  /** Whether the public listeners are up. */
  listening(): boolean;
  /** The metrics registry; without it /metrics is not served. */
  metrics?: { render(): string | Promise<string> } | undefined;
  /** Default READY_STORE_TIMEOUT_MS. */
  readyTimeoutMs?: number;
}

/**
 * GET /healthz (alive), GET /readyz (store and listeners; 503 when not) and GET /metrics
 * (Prometheus text). No token: they are served on the apex host only, which tunnels never
 * reach, so a tunnel hostname's /metrics always belongs to the tunnel's own service.
 */
export function opsRoutes(deps: OpsRouteDeps): PublicRoute[] {
  const routes: PublicRoute[] = [
    definePublicRoute({
      method: 'GET',
      path: '/healthz',
      tag: 'operations',
      summary: 'Liveness: the process answers',
      status: 200,
      response: Health,
      responseDescription: 'alive',
      async handler() {
        return { status: 'ok' as const };
      },
    }),
    definePublicRoute({
      method: 'GET',
      path: '/readyz',
      tag: 'operations',
      summary: 'Readiness: the store answers a query and the listeners are up',
      status: 200,
      response: Readiness,
      responseDescription: 'ready to serve',
      alternates: { 503: { description: 'not ready; checks says which part failed', schema: Readiness } },
      async handler() {
        const store = (await storeAnswers(deps)) ? 'ok' : 'failed';
        const listeners = deps.listening() ? 'ok' : 'failed';
        const ready = store === 'ok' && listeners === 'ok';
        const body = { status: ready ? 'ready' : 'unavailable', checks: { store, listeners } } as const;
        return ready ? body : new Reply(503, body);
      },
    }),
  ];
  const metrics = deps.metrics;
  if (metrics) {
    routes.push(
      definePublicRoute({
        method: 'GET',
        path: '/metrics',
        tag: 'operations',
        summary: 'Prometheus metrics of this node',
        status: 200,
        response: z.string(),
        contentType: PROMETHEUS_CONTENT_TYPE,
        responseDescription: 'text exposition format 0.0.4',
        async handler() {
          return metrics.render();
        },
      }),
    );
  }
  return routes;
}

async function storeAnswers(deps: OpsRouteDeps): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), deps.readyTimeoutMs ?? READY_STORE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([deps.pingStore().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
