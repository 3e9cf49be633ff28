import type { Logger } from 'pino';
import { newId, type WebhookRepo } from '../store/index.js';
import { subscribes, type WebhookEnvelope, type WebhookEventType } from './events.js';

export interface WebhookEventsOptions {
  repo: Pick<WebhookRepo, 'listForAccount' | 'enqueue'>;
  log: Logger;
  /** Called once an event is in the outbox (the dispatcher looks at once). */
  onQueued(): void;
  now?: () => number;
}

/**
 * The event bus the composition root hands to whatever sees something happen: `emit` writes the
 * event to the outbox with one delivery per subscribed webhook. An account without a webhook
 * for the type writes nothing. Events of one account are queued in the order they were emitted.
 */
export class WebhookEvents {
  private readonly now: () => number;
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(private readonly opts: WebhookEventsOptions) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * Queues an event; never throws (a failure is logged). `dedupeKey` makes it happen once
   * however many nodes emit it. Resolves to the event id, or undefined when nothing was queued.
   */
  emit(accountId: string, type: WebhookEventType, data: unknown, dedupeKey?: string): Promise<string | undefined> {
    const createdAt = this.now();
    const task = async (): Promise<string | undefined> => {
      const hooks = (await this.opts.repo.listForAccount(accountId)).filter((hook) => subscribes(hook.events, type));
      if (hooks.length === 0) return undefined;
      const envelope: WebhookEnvelope = { id: newId('evt'), type, createdAt: new Date(createdAt).toISOString(), data };
      const queued = await this.opts.repo.enqueue(
        { id: envelope.id, accountId, type, body: JSON.stringify(envelope), createdAt, dedupeKey },
        hooks.map((hook) => hook.id),
      );
      if (!queued) return undefined;
      this.opts.onQueued();
      return envelope.id;
    };
    const previous = this.chains.get(accountId) ?? Promise.resolve();
    const run = previous.then(task, task).catch((err: unknown) => {
      this.opts.log.error({ err, accountId, type }, 'could not queue webhook event');
      return undefined;
    });
    this.chains.set(accountId, run);
    void run.then(() => {
      if (this.chains.get(accountId) === run) this.chains.delete(accountId);
    });
    return run;
  }

  /** Resolves once every event emitted so far is queued (or given up); for shutdown. */
  async idle(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }
}

/** Percentages of the monthly transfer quota that send `usage.threshold`. */
export const USAGE_THRESHOLDS = [80, 100] as const;

/**
 * Turns month totals after each usage flush into `usage.threshold` events, once per account,
 * month and threshold (the dedupe key holds across nodes and restarts; the set here only spares
 * the store a write per flush).
 */
export function usageThresholdWatcher(
  events: Pick<WebhookEvents, 'emit'>,
  usageView: (accountId: string, bytes: number) => Promise<Record<string, unknown> | undefined>,
): (accountId: string, month: string, bytes: number, limitBytes: number) => void {
  const sent = new Set<string>();
  return (accountId, month, bytes, limitBytes) => {
    if (!Number.isFinite(limitBytes) || limitBytes <= 0) return;
    for (const threshold of USAGE_THRESHOLDS) {
      if (bytes < (limitBytes * threshold) / 100) continue;
      const key = `usage.threshold:${accountId}:${month}:${threshold}`;
      if (sent.has(key)) continue;
      sent.add(key);
      void usageView(accountId, bytes).then(
        (view) => view && events.emit(accountId, 'usage.threshold', { ...view, threshold, month }, key),
        () => sent.delete(key),
      );
    }
  };
}
