import type { Logger } from 'pino';
import { targetView, tunnelView, usageView, type WebhookRouteDeps } from './api/index.js';
import type { OrderOutcomeEvent } from './certs/index.js';
import type { ServerConfig } from './config.js';
import { domainView } from './domains/index.js';
import type { TunnelChange } from './edge/index.js';
import type { Account, Store, Tunnel } from './store/index.js';
import {
  deriveWebhookKey,
  loadOrCreateKeyFile,
  newSigningSecret,
  privateAddressProblem,
  SecretBox,
  usageThresholdWatcher,
  WebhookDispatcher,
  WebhookEvents,
  DELIVERY_TIMEOUT_MS,
} from './webhooks/index.js';

// Webhooks wired for one node: the event bus the API, the edge, the issuer and the meter report
// to, and the dispatcher that sends the outbox. server.ts composes it; each source gets one
// callback and never knows about webhooks.

/** The outbox keeps an event (and its deliveries and attempts) this long, then sweeps it. */
const OUTBOX_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const SWEEP_EVERY_MS = 60 * 60 * 1000;

export interface WebhookWiring {
  /** For controlPlaneRoutes. */
  routes: Pick<WebhookRouteDeps, 'webhookAdmin'> & {
    onKeyEvent(type: 'created' | 'revoked', accountId: string, key: unknown): void;
    onVerified(accountId: string, domain: unknown): void;
  };
  onTunnelChange(change: TunnelChange): void;
  onCertificate(outcome: OrderOutcomeEvent): void;
  onMonthTotal(accountId: string, month: string, bytes: number, limitBytes: number): void;
  /** Seals a secret under the node's webhook key (a tunnel's webhook signing secret, at rest). */
  seal(plain: string): string;
  events: WebhookEvents;
  start(): Promise<void>;
  /** Waits for events being queued and sends in flight; call before the store closes. */
  close(): Promise<void>;
}

/** What the event views read from the rest of the node, late-bound (the edge and meter are built after). */
export interface WebhookViews {
  publicUrl(hostname: string): string;
  isLive(tunnelId: string): boolean;
  liveTunnels(accountId: string): number;
  usedBytes(accountId: string): number | Promise<number>;
}

/** Builds the node's webhooks from the config: the key that seals secrets, the bus and the dispatcher. */
export async function createWebhooks(
  config: ServerConfig,
  store: Store,
  log: Logger,
  nodeId: string,
  views: WebhookViews,
): Promise<WebhookWiring> {
  const keySource = config.webhookKey ?? config.cluster?.secret;
  const box = new SecretBox(keySource !== undefined ? deriveWebhookKey(keySource) : await loadOrCreateKeyFile(config.dataDir));
  const whLog = log.child({ component: 'webhooks' });
  const dispatcher = new WebhookDispatcher({
    repo: store.webhooks,
    box,
    nodeId,
    log: whLog,
    allowPrivate: config.webhookAllowPrivate,
    retryScheduleMs: config.webhookRetryMs,
    timeoutMs: DELIVERY_TIMEOUT_MS,
  });
  const events = new WebhookEvents({ repo: store.webhooks, log: whLog, onQueued: () => dispatcher.wake() });
  const limitsFor = (plan: Account['plan']) => config.plans[plan];
  const watchUsage = usageThresholdWatcher(events, async (accountId) => {
    const account = await store.accounts.byId(accountId);
    if (!account) return undefined;
    return usageView({ limitsFor, liveTunnels: views.liveTunnels, meter: { usedBytes: views.usedBytes }, store }, account);
  });
  const target = config.edgeTarget === undefined ? null : targetView(config.edgeTarget);

  /** Rows of tunnels reported online, for the offline event of one whose row a clean exit deleted. */
  const onlineRows = new Map<string, Tunnel>();
  async function offlineView(change: Extract<TunnelChange, { type: 'offline' }>): Promise<unknown> {
    const { binding } = change;
    const known = onlineRows.get(binding.tunnelId);
    onlineRows.delete(binding.tunnelId);
    const row: Tunnel = (await store.tunnels.byId(binding.accountId, binding.tunnelId)) ??
      known ?? {
        id: binding.tunnelId,
        accountId: binding.accountId,
        hostname: binding.hostname,
        status: 'offline',
        pinned: binding.pinned,
        pool: binding.pool !== undefined,
        localAddr: binding.local,
        agentVersion: '',
        agentIp: '',
        nodeId,
        createdAt: binding.boundAt ?? Date.now(),
        updatedAt: Date.now(),
      };
    return tunnelView(row, { publicUrl: views.publicUrl, isLive: () => false });
  }

  let sweep: NodeJS.Timeout | undefined;
  return {
    events,
    seal: (plain) => box.seal(plain),
    routes: {
      webhookAdmin: {
        allowPrivate: config.webhookAllowPrivate,
        privateAddressProblem,
        newSecret() {
          const secret = newSigningSecret();
          return { secret, sealed: box.seal(secret) };
        },
        wake: () => dispatcher.wake(),
      },
      onKeyEvent: (type, accountId, key) => void events.emit(accountId, type === 'created' ? 'key.created' : 'key.revoked', key),
      onVerified: (accountId, domain) => void events.emit(accountId, 'domain.verified', domain),
    },
    onTunnelChange(change) {
      if (change.type === 'online') {
        onlineRows.set(change.tunnel.id, change.tunnel);
        const view = tunnelView(change.tunnel, { publicUrl: views.publicUrl, isLive: () => true });
        void events.emit(change.binding.accountId, 'tunnel.online', view);
        return;
      }
      void offlineView(change).then(
        (view) => events.emit(change.binding.accountId, 'tunnel.offline', view),
        (err: unknown) => whLog.error({ err }, 'could not describe an offline tunnel'),
      );
    },
    onCertificate(outcome) {
      void (async () => {
        const domain = (await store.domains.byHost(outcome.domainHost)).find((d) => d.state === 'verified');
        if (!domain) return;
        const data = {
          host: outcome.host,
          ...(outcome.issued ? { expiresAt: new Date(outcome.expiresAt).toISOString() } : { reason: outcome.reason }),
          domain: { ...domainView(domain), target },
        };
        await events.emit(domain.accountId, outcome.issued ? 'certificate.issued' : 'certificate.failed', data);
      })().catch((err: unknown) => whLog.error({ err }, 'could not queue a certificate event'));
    },
    onMonthTotal: watchUsage,
    async start() {
      await dispatcher.start();
      const prune = (): void =>
        void store.webhooks
          .deleteEventsBefore(Date.now() - OUTBOX_RETENTION_MS)
          .catch((err: unknown) => whLog.warn({ err }, 'webhook outbox sweep failed'));
      prune();
      sweep = setInterval(prune, SWEEP_EVERY_MS);
      sweep.unref();
    },
    async close() {
      clearInterval(sweep);
      await events.idle();
      await dispatcher.stop();
    },
  };
}
