import type { Binding } from './router.js';

/** What the edge learns about each proxied request (for the inspector and metering). */
export interface Exchange {
  binding: Binding | undefined;
  host: string;
  method: string;
  path: string;
  status: number;
  startedAt: number;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  ip: string;
  userAgent: string;
  proto: string;
}

/** Observes finished exchanges; must be cheap and never throw (it runs on the request path). */
export type ExchangeObserver = (exchange: Exchange) => void;

/**
 * Meters body bytes of an account as they pass, before they are forwarded; false means the
 * account's transfer quota is gone and the transfer must stop (usage metering).
 */
export type ByteMeter = (accountId: string, bytes: number) => boolean;

/** A fresh record of one visitor request, for the inspector and metering; routing fills in the binding. */
export function newExchange(host: string, method: string, path: string, ip: string, userAgent: string, proto: string): Exchange {
  return {
    binding: undefined,
    host,
    method,
    path,
    status: 0,
    startedAt: performance.now(),
    durationMs: 0,
    bytesIn: 0,
    bytesOut: 0,
    ip,
    userAgent,
    proto,
  };
}

/** The finish step every path ends an exchange with: its duration, then the observer (inspector, metering). */
export function finishExchange(exchange: Exchange, observe: ExchangeObserver): void {
  exchange.durationMs = performance.now() - exchange.startedAt;
  observe(exchange);
}
