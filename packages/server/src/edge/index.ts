// The data path: public listeners, routing by Host, agent sessions and the binder, each visitor
// exchange on its path (lean HTTP/1.1, Node's HTTP/1.1 and HTTP/2, upgrades), holds and the edge's
// pages; and the Fleet, what a lone node and a cluster both answer for.
// May use: hostname, store, auth, certs, metrics. Domains, usage and the inspector reach it as
// functions from server.ts.
export { Edge, type EdgeDeps, type ApexHandler } from './edge.js';
export { startListeners, type EdgeListeners, type ListenOptions, LISTEN_BACKLOG } from './listeners.js';
export type { Binding } from './router.js';
export { newBinding } from './edge-session.js';
export type { ByteMeter, Exchange, ExchangeObserver } from './exchange.js';
export type { DomainDecision, TunnelChange } from './binder.js';
export { normalizeHost } from './host.js';
export { pickMember } from './pool.js';
export { routeTableOfJson } from './route-labels.js';
export { PlanWatch } from './plan-watch.js';
export type { Fleet, LiveBinding } from './fleet.js';
export { actOn, isPending } from './access-verdict.js';
export {
  EDGE_COOKIE_PREFIX,
  SECURE_EDGE_COOKIE_PREFIX,
  EMAIL_HEADER,
  IDENTITY_HEADER,
  withIdentity,
  withoutEdgeCookies,
} from './forwarding.js';
export { page as edgePage, type EdgePage } from './pages.js';
export {
  bodyTooLargePage,
  headerRecord,
  rateLimitedPage,
  rateLimitUnavailablePage,
  webhookRefusedPage,
  type WebhookVerifier,
} from './traffic-step.js';
