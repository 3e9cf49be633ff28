export { Edge, type EdgeDeps, type ApexHandler } from './edge.js';
export { startListeners, type EdgeListeners, type ListenOptions, LISTEN_BACKLOG } from './listeners.js';
export type { Binding } from './router.js';
export type { ByteMeter, Exchange, ExchangeObserver } from './exchange.js';
export type { DomainDecision, TunnelChange } from './binder.js';
export { normalizeHost } from './host.js';
