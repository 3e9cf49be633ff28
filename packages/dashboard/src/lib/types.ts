// Wire shapes of the REST API the pages read. They come from the SDK, whose types are generated
// from the OpenAPI document the server publishes, so a change of the API breaks this build
// instead of a page. Type-only: nothing of the SDK reaches the browser bundle.

import type { components } from '@svcrouter/sdk';

export type {
  Account,
  CapturedRequest,
  CreatedKey,
  CreatedWebhook,
  DailyUsage,
  Domain,
  DomainCheck,
  Key,
  RequestPage,
  TunnelInfo as Tunnel,
  Usage,
  Webhook,
  WebhookDelivery,
  WebhookEventType,
} from '@svcrouter/sdk';

export type SessionState = components['schemas']['SessionState'];
export type SignedIn = components['schemas']['SignedIn'];
