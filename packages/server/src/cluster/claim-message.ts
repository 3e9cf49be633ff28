import type { ClusterRoute } from '../store/index.js';
import type { ClusterMessage } from './cluster-bus.js';

/** PostgreSQL refuses a notification whose payload is this many bytes or more (its default build). */
export const NOTIFY_PAYLOAD_LIMIT = 8000;

/**
 * The notification of a node's claim on a hostname. The binding's routes ride along when the whole
 * message fits in a notification; otherwise it says `R` and the other nodes read them from the
 * claim's row. Measured on the message as sent: the routes' JSON is escaped once more inside it.
 */
export function claimMessage(route: ClusterRoute): ClusterMessage {
  const message: ClusterMessage = {
    k: 'route',
    n: route.nodeId,
    h: route.hostname,
    t: route.tunnelId,
    a: route.accountId,
    l: route.localAddr,
    e: route.expiresAt,
    g: route.group,
    c: route.claimedAt,
    ...(route.proto === 'tls' ? { p: 'tls' as const } : {}),
  };
  if (route.routes === undefined) return message;
  const inline: ClusterMessage = { ...message, r: route.routes };
  return Buffer.byteLength(JSON.stringify(inline)) < NOTIFY_PAYLOAD_LIMIT ? inline : { ...message, R: 1 };
}
