import type { Logger } from 'pino';
import type { DeliveryJob, WebhookRepo } from '../store/index.js';
import type { SecretBox } from './secret-box.js';
import { send, type SendResult } from './sender.js';
import { signatureHeaders } from './signing.js';

/** Pauses after failed attempts: 5 s, 30 s, 2 min, 10 min, 1 h, then the last one again (hourly). */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([5_000, 30_000, 120_000, 600_000, 3_600_000]);
/** Retries stop this long after the event was queued: the delivery is then `failed`. */
export const RETRY_FOR_MS = 24 * 60 * 60 * 1000;
/** Each pause is the schedule's value times a factor drawn from [1 - JITTER, 1 + JITTER]. */
const JITTER = 0.2;
/** How often the outbox is looked at when nothing woke this node (other nodes' events, retries). */
const POLL_MS = 1000;
/** Sends in flight per node. */
const CONCURRENCY = 8;

export interface DispatcherOptions {
  repo: WebhookRepo;
  box: SecretBox;
  nodeId: string;
  log: Logger;
  /** SVC_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** SVC_WEBHOOK_RETRY_MS; default DEFAULT_RETRY_SCHEDULE_MS. */
  retryScheduleMs?: readonly number[];
  /** Default DELIVERY_TIMEOUT_MS (sender.ts). */
  timeoutMs: number;
  now?: () => number;
}

/** The pause before the next attempt after `attempts` failed ones, with jitter. */
export function retryDelay(schedule: readonly number[], attempts: number, random: () => number = Math.random): number {
  const base = schedule[Math.min(attempts, schedule.length) - 1] ?? schedule.at(-1) ?? 0;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

/**
 * Sends what the outbox holds. Every node runs one; a delivery is sent by the node that leased
 * it (WebhookRepo.claim), and its outcome is written only while that lease holds, so one
 * attempt is one request whichever nodes poll. A lease outlives the send's timeout: it lapses
 * only when its node died mid-send, and a restarted node lets its own go at once.
 */
export class WebhookDispatcher {
  private readonly now: () => number;
  private readonly schedule: readonly number[];
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private passing = false;
  private again = false;

  constructor(private readonly opts: DispatcherOptions) {
    this.now = opts.now ?? Date.now;
    this.schedule = opts.retryScheduleMs ?? DEFAULT_RETRY_SCHEDULE_MS;
  }

  /** Lets go of leases a killed run of this node left, then starts polling. */
  async start(): Promise<void> {
    const released = await this.opts.repo.releaseLeases(this.opts.nodeId);
    if (released > 0) this.opts.log.info({ count: released }, 'webhook deliveries left in flight by a previous run queued again');
    this.running = true;
    this.wake();
  }

  /** Looks at the outbox now (an event was queued, or a delivery was sent again). */
  wake(): void {
    if (!this.running) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.passing = true;
    void this.pass()
      .catch((err: unknown) => this.opts.log.warn({ err }, 'webhook outbox poll failed'))
      .finally(() => {
        this.passing = false;
        if (this.again) {
          this.again = false;
          this.wake();
        } else this.schedulePoll();
      });
  }

  /** Stops polling and waits for the sends in flight (each ends within its timeout). */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }

  private schedulePoll(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => this.wake(), POLL_MS);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    const free = CONCURRENCY - this.inFlight.size;
    if (free <= 0) return;
    const now = this.now();
    const ids = await this.opts.repo.due(now, free);
    for (const id of ids) {
      if (!this.running) return;
      const job = await this.opts.repo.claim(id, this.opts.nodeId, now, now + this.opts.timeoutMs * 3);
      if (!job) continue;
      const sending = this.deliver(job).catch((err: unknown) =>
        this.opts.log.error({ err, deliveryId: job.id }, 'webhook delivery failed'),
      );
      this.inFlight.add(sending);
      void sending.finally(() => {
        this.inFlight.delete(sending);
        this.wake();
      });
    }
  }

  private async deliver(job: DeliveryJob): Promise<void> {
    const attemptedAt = this.now();
    let result: SendResult;
    try {
      const secret = this.opts.box.open(job.sealedSecret);
      const headers = signatureHeaders(secret, job.eventId, job.body, attemptedAt);
      result = await send(job.url, headers, job.body, { timeoutMs: this.opts.timeoutMs, allowPrivate: this.opts.allowPrivate });
    } catch (err) {
      result = { error: `cannot sign: ${(err as Error).message}`, durationMs: 0 };
    }
    const ok = result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode < 300;
    const attempts = job.attempts + 1;
    const nextAt = this.now() + retryDelay(this.schedule, attempts);
    const state = ok ? 'delivered' : nextAt > job.eventCreatedAt + RETRY_FOR_MS ? 'failed' : 'pending';
    const written = await this.opts.repo.finish(job.id, this.opts.nodeId, {
      attemptedAt,
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
      state,
      nextAttemptAt: state === 'pending' ? nextAt : attemptedAt,
    });
    this.opts.log.info(
      { deliveryId: job.id, eventId: job.eventId, type: job.eventType, statusCode: result.statusCode, error: result.error, state, written },
      'webhook attempt',
    );
  }
}
