import type { WebhookProvider } from '@svcrouter/protocol';
import type { TrafficRules } from '../policy/index.js';
import type { EdgeExchange } from './exchange.js';
import { page, type EdgePage } from './pages.js';

/** Why a webhook's signature check failed, as the 403 page names it; undefined: it passed. */
export type WebhookFailure = 'missing signature' | 'signature mismatch' | 'timestamp outside tolerance';

/** A request as the webhook check sees it: the public URL (query included), the method, the headers, the whole body. */
export interface WebhookRequest {
  url: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Checks a webhook signature as its provider documents it (policy/webhook-signatures.ts). */
export type WebhookVerifier = (
  provider: WebhookProvider,
  secret: string,
  request: WebhookRequest,
  nowMs: number,
) => WebhookFailure | undefined;

/** A visitor's side the traffic step drives: forwarding, and reading the whole body for a webhook check. */
export interface TrafficVisitor {
  forward(): void;
  /**
   * The whole request body, at most `max` bytes: the bytes, 'too large', or undefined when the
   * visitor left. Absent on paths that carry no body (the lean path, an upgrade): an empty one.
   */
  readBody?(max: number): Promise<Buffer | 'too large' | undefined>;
}

/**
 * After the access rules: the tunnel's traffic rules (traffic-step.ts), or straight to the agent
 * for a tunnel without any, at the cost of one check.
 */
export function passOn(
  exchange: EdgeExchange,
  rawHeaders: readonly string[],
  visitor: TrafficVisitor,
  verify: WebhookVerifier | undefined,
): (() => void) | undefined {
  const traffic = exchange.binding!.traffic;
  if (traffic === undefined) {
    visitor.forward();
    return undefined;
  }
  return applyTraffic(traffic, exchange, rawHeaders, visitor, verify);
}

/**
 * The traffic rules of a request the access rules let in, in order: the rate limit (429 with
 * Retry-After), the edge rules (an answer ends the request; a rewrite changes the target), the
 * webhook check (413, 403 naming the reason), then the visitor is forwarded (the exchange applies
 * the header rules as it builds the head). Every answer is the exchange's, so it is recorded with
 * its status. Returns what to call when the visitor leaves while a step waits, or undefined.
 */
export function applyTraffic(
  traffic: TrafficRules,
  exchange: EdgeExchange,
  rawHeaders: readonly string[],
  visitor: TrafficVisitor,
  verify: WebhookVerifier | undefined,
): (() => void) | undefined {
  const rate = traffic.admitRate(exchange.binding!.hostname, exchange.ip, Date.now());
  if (rate === true) return afterRate(traffic, exchange, rawHeaders, visitor, verify);
  if (typeof rate === 'number') {
    exchange.refuse(rateLimitedPage(rate));
    return undefined;
  }
  void rate.then(
    (settled) => {
      if (exchange.isFinished) return;
      if (settled === true) afterRate(traffic, exchange, rawHeaders, visitor, verify);
      else exchange.refuse(rateLimitedPage(settled));
    },
    // A shared store that cannot answer must not let a flood through, nor hang the visitor.
    () => exchange.isFinished || exchange.refuse(rateLimitUnavailablePage()),
  );
  return () => exchange.finish();
}

function afterRate(
  traffic: TrafficRules,
  exchange: EdgeExchange,
  rawHeaders: readonly string[],
  visitor: TrafficVisitor,
  verify: WebhookVerifier | undefined,
): (() => void) | undefined {
  if (traffic.rules !== undefined) {
    const outcome = traffic.applyRules({ method: exchange.method, target: exchange.path, headers: rawHeaders });
    if (outcome !== undefined) {
      if ('reply' in outcome) {
        exchange.refuse(outcome.reply);
        return undefined;
      }
      exchange.forwardTarget = outcome.target;
    }
  }
  const webhook = traffic.verifyWebhook;
  if (webhook === undefined) {
    visitor.forward();
    return undefined;
  }
  const read = visitor.readBody ? visitor.readBody(webhook.maxBody) : Promise.resolve(Buffer.alloc(0));
  void read.then((body) => {
    if (exchange.isFinished) return;
    if (body === undefined) return exchange.finish();
    if (body === 'too large') return exchange.refuse(bodyTooLargePage(webhook.maxBody));
    const request = { url: publicUrl(exchange, rawHeaders), method: exchange.method, headers: headerRecord(rawHeaders), body };
    const failure = verify === undefined ? 'signature mismatch' : verify(webhook.provider, webhook.secret, request, Date.now());
    if (failure !== undefined) return exchange.refuse(webhookRefusedPage(failure));
    exchange.requestBody = body;
    visitor.forward();
  });
  return () => exchange.finish();
}

/** The URL the sender signed: the visitor's scheme, Host (port included) and target, query included. */
function publicUrl(exchange: EdgeExchange, rawHeaders: readonly string[]): string {
  let authority = exchange.host;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const lower = rawHeaders[i]!.toLowerCase();
    if (lower === 'host' || lower === ':authority') authority = rawHeaders[i + 1]!;
  }
  return `${exchange.secure ? 'https' : 'http'}://${authority}${exchange.path}`;
}

/** Flat pairs as Node's `headers`: lower-case names, repeated ones as lists, pseudo-headers left out. */
export function headerRecord(pairs: readonly string[]): Record<string, string | string[] | undefined> {
  const record: Record<string, string | string[] | undefined> = {};
  for (let i = 0; i < pairs.length; i += 2) {
    const name = pairs[i]!.toLowerCase();
    if (name.startsWith(':')) continue;
    const value = pairs[i + 1]!;
    const seen = record[name];
    record[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return record;
}

/** 429 from the tunnel's rate limit, with when to try again. */
export function rateLimitedPage(retryAfterSeconds: number): EdgePage {
  const limited = page(
    429,
    'Too many requests',
    `This tunnel allows a limited number of requests per visitor. Try again in ${retryAfterSeconds} s.`,
  );
  limited.headers['retry-after'] = String(retryAfterSeconds);
  return limited;
}

/** 503: the shared count behind the rate limit did not answer; the request is not let through uncounted. */
export function rateLimitUnavailablePage(): EdgePage {
  return page(503, 'Rate limit unavailable', 'The rate limit could not be checked. Try again.');
}

/** 403 from the webhook check, naming why. */
export function webhookRefusedPage(reason: WebhookFailure): EdgePage {
  return page(403, 'Webhook signature refused', `The request's webhook signature was refused: ${reason}.`);
}

/** 413: the body is larger than the webhook check reads. */
export function bodyTooLargePage(maxBody: number): EdgePage {
  return page(413, 'Request body too large', `This tunnel checks webhook signatures on bodies of at most ${maxBody} bytes.`);
}
