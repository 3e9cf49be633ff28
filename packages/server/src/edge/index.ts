export { Edge, type EdgeDeps, type ApexHandler } from './edge.js';
export { startListeners, type EdgeListeners, type ListenOptions, LISTEN_BACKLOG } from './listeners.js';
export type { Binding } from './router.js';
export type { ByteMeter, Exchange, ExchangeObserver } from './exchange.js';
export type { DomainDecision } from './binder.js';
export { normalizeHost } from './host.js';
export type { Fleet, LiveBinding } from './fleet.js';
