import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { hasRequestBody } from './forwarding.js';
import { headerListBytes } from './limits.js';
import type { Binding } from './router.js';

/** Most requests held at once for one name while its agent reconnects; more get the offline page. */
export const HOLD_MAX_REQUESTS = 100;
/** Most bytes charged at once to the requests held for one name (heads plus body reservations). */
export const HOLD_MAX_BYTES = 1024 * 1024;
/**
 * What a held request with a body is charged for it at most. A held body is not read: Node buffers
 * up to about this much of it (an HTTP/1.1 request's readable buffer, an HTTP/2 stream's initial
 * window) before backpressure stops the visitor, so this is what holding it can cost the edge.
 */
export const HOLD_BODY_RESERVE = 64 * 1024;

/** One request waiting for its name to be bound again. */
export interface HoldTicket {
  /** The name was bound again by the account that held it: proxy the request now. */
  deliver(binding: Binding): void;
  /** The hold is over (timed out, the grace ended, the edge is closing): refuse the request. */
  expire(): void;
}

export interface HoldOptions {
  /** Longest a request is held (SVC_HOLD_MS); 0 turns holding off. */
  holdMs: number;
  maxRequests?: number;
  maxBytes?: number;
  /** A held request threw while being delivered. */
  onError?(error: unknown): void;
}

interface Held {
  ticket: HoldTicket;
  bytes: number;
  timer: NodeJS.Timeout;
}

interface HoldQueue {
  accountId: string;
  bytes: number;
  entries: Set<Held>;
}

/**
 * Requests for names whose agents lost their connection, held while the agent reconnects
 * (within the name's grace period, see Binder) instead of answered with the offline page at
 * once. Bounded per name in count and bytes; a request past its hold, or one that does not fit,
 * is refused as before. Only a binding of the account that held the name receives them.
 */
export class Holds {
  private readonly queues = new Map<string, HoldQueue>();
  private readonly maxRequests: number;
  private readonly maxBytes: number;
  private closed = false;

  constructor(private readonly options: HoldOptions) {
    this.maxRequests = options.maxRequests ?? HOLD_MAX_REQUESTS;
    this.maxBytes = options.maxBytes ?? HOLD_MAX_BYTES;
  }

  /**
   * Holds a request for `hostname`, reserved for `accountId` until `graceUntil` (Date.now()).
   * Answers a cancel function (the visitor left: drop it; true when it was still held, and then
   * nothing more is called), or undefined when the request cannot be held and must be refused now.
   */
  hold(hostname: string, accountId: string, graceUntil: number, bytes: number, ticket: HoldTicket): (() => boolean) | undefined {
    if (this.closed) return undefined;
    const waitMs = Math.min(this.options.holdMs, graceUntil - Date.now());
    if (waitMs <= 0) return undefined;
    let queue = this.queues.get(hostname);
    if (queue && queue.accountId !== accountId) {
      // The name changed hands between holds (a grace ended, another account bound and lost it).
      this.expireQueue(hostname, queue);
      queue = undefined;
    }
    if (queue && (queue.entries.size >= this.maxRequests || queue.bytes + bytes > this.maxBytes)) return undefined;
    if (!queue && bytes > this.maxBytes) return undefined;
    if (!queue) this.queues.set(hostname, (queue = { accountId, bytes: 0, entries: new Set() }));
    const owner = queue;
    const held: Held = {
      ticket,
      bytes,
      timer: setTimeout(() => {
        if (this.take(hostname, owner, held)) ticket.expire();
      }, waitMs),
    };
    owner.entries.add(held);
    owner.bytes += bytes;
    return () => this.take(hostname, owner, held);
  }

  /** Number of requests held for `hostname`. */
  count(hostname: string): number {
    return this.queues.get(hostname)?.entries.size ?? 0;
  }

  /**
   * The name is bound again: its held requests go to the binding, in arrival order, if it is the
   * account's that held them; any other account's binding gets none, and they are refused.
   */
  release(binding: Binding): number {
    const queue = this.queues.get(binding.hostname);
    if (!queue) return 0;
    if (queue.accountId !== binding.accountId) {
      this.expireQueue(binding.hostname, queue);
      return 0;
    }
    this.queues.delete(binding.hostname);
    const entries = [...queue.entries];
    queue.entries.clear();
    for (const held of entries) {
      clearTimeout(held.timer);
      // One request failing to start must not keep the others from theirs.
      try {
        held.ticket.deliver(binding);
      } catch (error) {
        this.options.onError?.(error);
      }
    }
    return entries.length;
  }

  /** Refuses the requests held for `hostname` now (its name was given up on purpose). */
  expire(hostname: string): void {
    const queue = this.queues.get(hostname);
    if (queue) this.expireQueue(hostname, queue);
  }

  /** Refuses every held request, and holds none from now on (the edge is closing). */
  close(): void {
    this.closed = true;
    for (const [hostname, queue] of [...this.queues]) this.expireQueue(hostname, queue);
  }

  private expireQueue(hostname: string, queue: HoldQueue): void {
    if (this.queues.get(hostname) === queue) this.queues.delete(hostname);
    const entries = [...queue.entries];
    queue.entries.clear();
    queue.bytes = 0;
    for (const held of entries) {
      clearTimeout(held.timer);
      held.ticket.expire();
    }
  }

  /** Takes a request out of its queue; false when it had already left (delivered, expired, cancelled). */
  private take(hostname: string, queue: HoldQueue, held: Held): boolean {
    if (!queue.entries.delete(held)) return false;
    clearTimeout(held.timer);
    queue.bytes -= held.bytes;
    if (queue.entries.size === 0 && this.queues.get(hostname) === queue) this.queues.delete(hostname);
    return true;
  }
}

/**
 * What holding a request may cost the edge: its head, and the body bytes Node buffers before it
 * stops reading the visitor (at most HOLD_BODY_RESERVE; less when Content-Length says so).
 */
export function heldRequestBytes(req: IncomingMessage | Http2ServerRequest): number {
  const headBytes = headerListBytes(req.rawHeaders);
  if (!hasRequestBody(req)) return headBytes;
  const declared = Number(req.headers['content-length']);
  return headBytes + (Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, HOLD_BODY_RESERVE) : HOLD_BODY_RESERVE);
}
