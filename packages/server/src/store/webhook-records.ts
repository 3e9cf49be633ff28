// Webhooks in the store: receivers, the outbox of events and their deliveries (012).

/** Delivery states, as stored in webhook_deliveries.state. */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface WebhookRecord {
  id: string;
  accountId: string;
  url: string;
  /** Event types the receiver wants; empty: every type. */
  events: string[];
  /** The signing secret sealed by webhooks/secret-box.ts; never the secret in clear. */
  sealedSecret: string;
  createdAt: number;
}

export interface NewWebhook {
  accountId: string;
  url: string;
  events: string[];
  sealedSecret: string;
}

/** One event to queue: its JSON body is final (signed as is, on every attempt). */
export interface NewWebhookEvent {
  id: string;
  accountId: string;
  type: string;
  body: string;
  createdAt: number;
  /** Set for an event that must happen once whichever node sees it (a usage threshold per month). */
  dedupeKey?: string | undefined;
}

export interface AttemptRecord {
  attemptedAt: number;
  statusCode: number | undefined;
  error: string | undefined;
  durationMs: number;
}

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: number;
  createdAt: number;
  updatedAt: number;
}

/** A delivery with its attempts, oldest attempt first (GET /v1/webhooks/:id/deliveries). */
export interface DeliveryWithAttempts extends DeliveryRecord {
  attemptList: AttemptRecord[];
}

/** What a node needs to send a delivery it claimed. */
export interface DeliveryJob extends DeliveryRecord {
  url: string;
  sealedSecret: string;
  body: string;
  /** When the event was queued: retries stop a fixed time after it. */
  eventCreatedAt: number;
}

/** What became of one attempt, written with its attempt row. */
export interface AttemptOutcome extends AttemptRecord {
  /** The delivery's state afterwards; `pending` with nextAttemptAt for a retry. */
  state: DeliveryState;
  nextAttemptAt: number;
}

export interface WebhookRepo {
  create(input: NewWebhook): Promise<WebhookRecord>;
  /** The account's webhooks, newest first. */
  listForAccount(accountId: string): Promise<WebhookRecord[]>;
  byId(accountId: string, id: string): Promise<WebhookRecord | undefined>;
  countForAccount(accountId: string): Promise<number>;
  /** Deletes the webhook with its deliveries; false when not found or another account's. */
  delete(accountId: string, id: string): Promise<boolean>;
  /**
   * Queues the event and one pending delivery per webhook id, in one transaction. False (and
   * nothing written) when an event with the same dedupe key exists: another node queued it.
   */
  enqueue(event: NewWebhookEvent, webhookIds: readonly string[]): Promise<boolean>;
  /** Ids of pending deliveries due at `now` and not leased by a live node, oldest due first. */
  due(now: number, limit: number): Promise<string[]>;
  /** When the next pending delivery falls due; undefined when none is pending. */
  nextDueAt(): Promise<number | undefined>;
  /**
   * Leases a due delivery to `nodeId` until `leaseUntil` with one conditional update: of nodes
   * racing for it, one gets the job and the others undefined.
   */
  claim(id: string, nodeId: string, now: number, leaseUntil: number): Promise<DeliveryJob | undefined>;
  /** Records the attempt and the new state, only while `nodeId` still holds the lease; false otherwise. */
  finish(id: string, nodeId: string, outcome: AttemptOutcome): Promise<boolean>;
  /** At node start: leases a previous run of this node left (it was killed mid-send) are let go. */
  releaseLeases(nodeId: string): Promise<number>;
  /** The webhook's newest deliveries with their attempts. */
  deliveries(webhookId: string, limit: number): Promise<DeliveryWithAttempts[]>;
  /** The newest delivery of each webhook of the account, by webhook id. */
  lastDeliveries(accountId: string): Promise<Map<string, DeliveryRecord>>;
  /** Makes a delivery of the webhook pending and due at `now` again; false when there is none. */
  retry(webhookId: string, deliveryId: string, now: number): Promise<boolean>;
  /** Deletes events (with their deliveries) queued before `before`; returns how many. */
  deleteEventsBefore(before: number): Promise<number>;
}
