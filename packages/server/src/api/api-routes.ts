import { coreRoutes, type CoreRouteDeps } from './routes-core.js';
import { domainRoutes, type DomainRouteDeps } from './routes-domains.js';
import { keyRoutes, type KeyRouteDeps } from './routes-keys.js';
import { passwordRoutes, type PasswordRouteDeps } from './routes-password.js';
import { requestStreamRoutes, type RequestStreamDeps } from './routes-request-stream.js';
import { requestRoutes, type RequestRouteDeps } from './routes-requests.js';
import { usageRoutes, type UsageRouteDeps } from './routes-usage.js';
import { tcpAddressRoutes, type TcpAddressRouteDeps } from './routes-tcp-addresses.js';
import type { AnyRoute } from './router.js';
import { webhookRoutes, type WebhookRouteDeps } from './routes-webhooks.js';

/** Everything the control-plane routes need, by feature. */
export interface ControlPlaneDeps
  extends
    Omit<CoreRouteDeps, 'store'>,
    Omit<KeyRouteDeps, 'store'>,
    Omit<UsageRouteDeps, 'store'>,
    Omit<RequestRouteDeps, 'store'>,
    Omit<RequestStreamDeps, 'store'>,
    Omit<DomainRouteDeps, 'store'>,
    Omit<PasswordRouteDeps, 'store'>,
    Omit<WebhookRouteDeps, 'store'>,
    Omit<TcpAddressRouteDeps, 'store'> {
  store: CoreRouteDeps['store'] &
    KeyRouteDeps['store'] &
    UsageRouteDeps['store'] &
    RequestRouteDeps['store'] &
    DomainRouteDeps['store'] &
    PasswordRouteDeps['store'] &
    WebhookRouteDeps['store'] &
    TcpAddressRouteDeps['store'];
}

/**
 * The authenticated /v1 route table. A feature adds its routes with one line here
 * (custom domains: `...domainRoutes(deps)`), and OpenAPI picks them up from the table.
 */
export function controlPlaneRoutes(deps: ControlPlaneDeps): AnyRoute[] {
  return [
    ...coreRoutes(deps),
    ...usageRoutes(deps),
    ...requestRoutes(deps),
    ...requestStreamRoutes(deps),
    ...keyRoutes(deps),
    ...domainRoutes(deps),
    ...passwordRoutes(deps),
    ...webhookRoutes(deps),
    ...tcpAddressRoutes(deps),
  ];
}
