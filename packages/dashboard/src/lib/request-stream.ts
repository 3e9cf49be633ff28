import { api } from './api.js';
import { connection } from './connection.js';
import type { CapturedRequest } from './types.js';

/** What the live Traffic table hears from `GET /v1/requests/stream`. */
export interface StreamHandlers {
  onRequest(record: CapturedRequest): void;
  /** The server dropped records because this page fell behind; `message` says how many. */
  onDropped(message: string): void;
  onState(state: 'live' | 'reconnecting'): void;
}

/** Pause before opening a closed stream again (the browser retries a broken one by itself). */
const REOPEN_MS = 2000;

/**
 * Follows the live stream of captured requests with the given filters, starting after `since`.
 * EventSource carries the session cookie (same origin) and reconnects by itself after a network
 * failure, sending Last-Event-ID; a stream the server closed for good (401, a restart that
 * answered before the API was ready) is opened again here. Returns a function that stops it.
 */
export function followRequests(filters: URLSearchParams, since: string | undefined, handlers: StreamHandlers): () => void {
  let source: EventSource | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let latest = since;

  const open = (): void => {
    const query = new URLSearchParams(filters);
    if (latest) query.set('since', latest);
    source = new EventSource(`/v1/requests/stream?${query.toString()}`);
    source.addEventListener('open', () => handlers.onState('live'));
    source.addEventListener('request', (event) => {
      const record = JSON.parse((event as MessageEvent<string>).data) as CapturedRequest;
      latest = record.timestamp;
      handlers.onRequest(record);
    });
    source.addEventListener('dropped', (event) => {
      const body = JSON.parse((event as MessageEvent<string>).data) as { dropped?: number; message?: string };
      handlers.onDropped(body.message ?? `${body.dropped ?? 'some'} requests were not shown because this page fell behind`);
    });
    source.addEventListener('error', () => {
      handlers.onState('reconnecting');
      // Still CONNECTING: the connection broke and the browser retries; the page shows the banner.
      if (source?.readyState !== EventSource.CLOSED) {
        connection.lost();
        return;
      }
      // Closed for good: find out why (a 401 signs the page out) and try again later.
      api('GET', '/v1/me').catch(() => undefined);
      if (!stopped) timer = setTimeout(open, REOPEN_MS);
    });
  };
  open();
  // After a server restart the browser may have given up; start afresh once the API answers.
  const unsubscribe = connection.subscribe((online) => {
    if (!online || stopped || source?.readyState === EventSource.OPEN) return;
    source?.close();
    if (timer) clearTimeout(timer);
    open();
  });
  return () => {
    stopped = true;
    unsubscribe();
    if (timer) clearTimeout(timer);
    source?.close();
  };
}
