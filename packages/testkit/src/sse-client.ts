import http from 'node:http';
import http2 from 'node:http2';
import type { Readable } from 'node:stream';

/** One parsed server-sent event, or a comment line (`: keep-alive`). */
export interface SseEvent {
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
}

export interface SseOpenOptions {
  headers?: Record<string, string>;
  /** Speak HTTP/2 (https: URLs with `ca`, or h2c for http:). */
  http2?: boolean;
  /** Certificate authority for https: URLs. */
  ca?: string;
}

/**
 * A test client of a `text/event-stream` response, over HTTP/1.1 or HTTP/2, that can stop
 * reading (pause) to act as a slow subscriber and waits for events rather than for time.
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  private buffer = '';
  private readonly counts = new Map<string | undefined, number>();
  private ended = false;
  private readonly waiters = new Set<() => void>();
  /** Raw body bytes received (the non-event answers, such as a 401's JSON, are here too). */
  text = '';

  private constructor(
    readonly status: number,
    readonly headers: Record<string, string | string[] | undefined>,
    private readonly body: Readable,
    private readonly closeTransport: () => void,
  ) {
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => this.receive(chunk));
    const end = (): void => {
      this.ended = true;
      this.wake();
    };
    body.on('end', end);
    body.on('close', end);
    body.on('error', end);
  }

  /** Opens the stream; resolves once the response head arrived. */
  static open(url: string, options: SseOpenOptions = {}): Promise<SseClient> {
    const target = new URL(url);
    const headers = { accept: 'text/event-stream', ...options.headers };
    if (options.http2) {
      return new Promise((resolve, reject) => {
        const session = http2.connect(target.origin, options.ca ? { ca: options.ca } : {});
        session.on('error', reject);
        const stream = session.request({ ':path': target.pathname + target.search, ...headers });
        stream.on('error', reject);
        stream.once('response', (head) => {
          resolve(new SseClient(Number(head[':status']), head, stream, () => session.destroy()));
        });
      });
    }
    return new Promise((resolve, reject) => {
      const req = http.get(target, { headers }, (res) =>
        resolve(new SseClient(res.statusCode ?? 0, res.headers, res, () => req.destroy())),
      );
      req.on('error', reject);
    });
  }

  /** Stops reading: the server's writes fill the transport's buffers and then its own. */
  pause(): void {
    this.body.pause();
  }

  resume(): void {
    this.body.resume();
  }

  /** How many events named `name` arrived (`request` events by default). */
  count(name = 'request'): number {
    return this.counts.get(name) ?? 0;
  }

  /** Events named `name` (`request` events by default). */
  named(name = 'request'): SseEvent[] {
    return this.events.filter((e) => e.event === name);
  }

  /** Resolves once `check` holds for the events received so far; rejects if the stream ends first. */
  until(check: (events: SseEvent[]) => boolean, what = 'the expected events'): Promise<void> {
    return new Promise((resolve, reject) => {
      const test = (): void => {
        if (check(this.events)) {
          this.waiters.delete(test);
          resolve();
        } else if (this.ended) {
          this.waiters.delete(test);
          reject(new Error(`stream ended before ${what}; received ${this.events.length} events`));
        }
      };
      this.waiters.add(test);
      test();
    });
  }

  /** Resolves once the stream has ended (the server closed it, or close() was called). */
  whenEnded(): Promise<void> {
    return this.until(() => false).catch(() => undefined);
  }

  close(): void {
    this.body.destroy();
    this.closeTransport();
  }

  private receive(chunk: string): void {
    this.text += chunk;
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = {};
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === '') event.comment = value;
        else if (field === 'event' || field === 'id') event[field] = value;
        else if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
      }
      this.events.push(event);
      this.counts.set(event.event, (this.counts.get(event.event) ?? 0) + 1);
    }
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
