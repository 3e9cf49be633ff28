import type { ServerResponse } from 'node:http';
import type { ApiResponse } from './http-io.js';
import { PendingBytes } from './pending-bytes.js';

export interface EventStreamOptions {
  /** Events held while the client is not taking what was written; beyond it events are dropped and counted. */
  maxQueued: number;
  /** How often an idle stream sends a comment, so proxies and clients see it is alive. */
  keepAliveMs: number;
  /** The `dropped` event's data for a count of dropped events. */
  droppedData(count: number): string;
  /**
   * How long events wait to be written together, in milliseconds; 0 writes each loop turn's
   * events on the next tick.
   */
  coalesceMs: number;
}

/**
 * One `text/event-stream` response (HTTP/1.1 or HTTP/2) whose writer never waits for its
 * client: events go straight to the response while it takes them; once `res.write()` says
 * its buffer is full, events wait in a bounded queue, and beyond that bound they are dropped
 * and counted. When the client has caught up (the response drains), the queue is written and
 * then one `dropped` event tells the client how many it missed. So a slow reader costs its
 * own queue and nothing else: never the caller's time, never other streams' events.
 *
 * Events are written together: those sent within `coalesceMs` of the first one go out in one
 * write, not one write per event or per published batch. Under load, every write wakes the
 * reader and costs both sides a system call and a TCP segment train, whatever its size.
 */
export class EventStream {
  private queue: string[] = [];
  private blocked = false;
  private dropped = 0;
  private closedFlag = false;
  private readonly timer: NodeJS.Timeout;
  private readonly onClose: Array<() => void> = [];
  private waiters: Array<() => void> = [];
  /** Events sent since the last write, written together when the flush timer fires. */
  private readonly pending = new PendingBytes();
  private flushScheduled = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly flushBound = (): void => this.flush();

  constructor(
    private readonly res: ApiResponse,
    private readonly opts: EventStreamOptions,
  ) {
    // No Connection header: HTTP/2 forbids it, and HTTP/1.1 keeps the connection open anyway.
    (res as ServerResponse).writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // Reverse proxies such as nginx buffer responses unless told not to.
      'x-accel-buffering': 'no',
    });
    // A first comment sends the headers now (HTTP/1.1 holds them until the first write).
    this.write(': stream open\n\n');
    this.timer = setInterval(() => this.keepAlive(), opts.keepAliveMs);
    this.timer.unref();
    res.on('drain', () => this.drain());
    res.once('close', () => this.close());
  }

  /** True once the client went away (or the stream was closed). */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** True while the response's buffer is full: sent events are queued (or dropped). */
  get waiting(): boolean {
    return this.blocked;
  }

  /** Sends one event now, or queues it, or drops it when the queue is full. */
  send(event: string, id: string, data: string): void {
    this.push(`event: ${event}\nid: ${id}\ndata: ${data}\n\n`);
  }

  /** As send, for an event already in its wire form (`event: …\n…\n\n`), shared between streams. */
  sendEncoded(text: string): void {
    this.push(text);
  }

  /** Counts events the caller dropped on this stream's behalf; reported with the next `dropped` event. */
  countDropped(count: number): void {
    this.dropped += count;
    if (!this.blocked && !this.closedFlag) this.reportDropped();
  }

  /** Resolves once the response takes writes again (at once when it does), or the stream closed. */
  ready(): Promise<void> {
    if (!this.blocked || this.closedFlag) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Runs `listener` once when the stream closes. */
  whenClosed(listener: () => void): void {
    if (this.closedFlag) listener();
    else this.onClose.push(listener);
  }

  /** Writes the events sent so far now rather than when the flush timer fires. */
  flush(): void {
    this.cancelFlush();
    // While the response is full, drain() writes what is pending, ahead of the queue.
    if (this.closedFlag || this.blocked) return;
    const bytes = this.pending.take();
    if (bytes) this.write(bytes);
  }

  /** Ends the response and releases everything the stream holds. */
  close(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    clearInterval(this.timer);
    this.cancelFlush();
    this.queue = [];
    this.pending.clear();
    this.releaseWaiters();
    for (const listener of this.onClose.splice(0)) listener();
    if (!this.res.writableEnded) this.res.end();
  }

  private push(text: string): void {
    if (this.closedFlag) return;
    if (!this.blocked) {
      this.pending.append(text);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        if (this.opts.coalesceMs > 0) this.flushTimer = setTimeout(this.flushBound, this.opts.coalesceMs);
        else process.nextTick(this.flushBound);
      }
    } else if (this.queue.length < this.opts.maxQueued) this.queue.push(text);
    else this.dropped++;
  }

  private write(chunk: string | Buffer): void {
    if (!(this.res as ServerResponse).write(chunk)) this.blocked = true;
  }

  private drain(): void {
    if (this.closedFlag) return;
    this.blocked = false;
    // One write for everything that waited (bounded by maxQueued events), the pending events
    // first: they were sent before any queued one.
    const bytes = this.pending.take();
    const queued = this.queue.join('');
    this.queue = [];
    this.cancelFlush();
    if (bytes) this.write(bytes);
    if (queued !== '') this.write(queued);
    if (!this.blocked && this.dropped > 0) this.reportDropped();
    if (!this.blocked) this.releaseWaiters();
  }

  private reportDropped(): void {
    const count = this.dropped;
    this.dropped = 0;
    // After the events sent before it, which may still be pending.
    const pending = this.pending.take();
    this.cancelFlush();
    if (pending) this.write(pending);
    this.write(`event: dropped\ndata: ${this.opts.droppedData(count)}\n\n`);
  }

  private cancelFlush(): void {
    this.flushScheduled = false;
    if (this.flushTimer !== undefined) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
  }

  private keepAlive(): void {
    // A stream whose client is behind, or that has events pending, is not idle.
    if (!this.blocked && !this.closedFlag && this.pending.empty) this.write(': keep-alive\n\n');
  }

  private releaseWaiters(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
