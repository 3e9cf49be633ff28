/** Every webhook event type, in the order the docs list them. */
export const WEBHOOK_EVENT_TYPES = [
  'tunnel.online',
  'tunnel.offline',
  'domain.verified',
  'certificate.issued',
  'certificate.failed',
  'usage.threshold',
  'key.created',
  'key.revoked',
] as const;

/** One webhook event type. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The JSON body of every delivery: `data` is the object as the REST API shows it. */
export interface WebhookEnvelope {
  id: string;
  type: WebhookEventType;
  createdAt: string;
  data: unknown;
}

/** Whether a webhook subscribed to `events` (empty: every type) receives `type`. */
export function subscribes(events: readonly string[], type: string): boolean {
  return events.length === 0 || events.includes(type);
}
