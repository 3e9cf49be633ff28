import type { Logger } from 'pino';
import { storedRecord, type NewRequestRecord, type RequestRecord, type StoredIds } from '../store/index.js';

/** Receives each stored record of one account; called on the inspector's write loop, so it must only queue. */
export type RequestListener = (record: RequestRecord) => void;

/**
 * Live feed of the Traffic Inspector's records (GET /v1/requests/stream). The inspector
 * publishes each batch once the store has committed it, under the ids the store gave it, so a
 * subscriber sees exactly what GET /v1/requests lists afterwards, and a reader that subscribes
 * first and then lists the store misses nothing in between (it meets some records twice, and
 * tells them apart by id).
 *
 * Publishing without subscribers is one Map size check per batch: no record is copied and no
 * id is built. With subscribers, only records of accounts someone follows are built.
 */
export class RequestHub {
  private readonly byAccount = new Map<string, Set<RequestListener>>();
  private subscribers = 0;

  constructor(private readonly log?: Logger) {}

  /** Follows the account's records from now on; returns the unsubscribe function (idempotent). */
  subscribe(accountId: string, listener: RequestListener): () => void {
    let listeners = this.byAccount.get(accountId);
    if (!listeners) this.byAccount.set(accountId, (listeners = new Set()));
    // A wrapper per subscription, so one listener function subscribed twice counts twice.
    const entry: RequestListener = (record) => listener(record);
    listeners.add(entry);
    this.subscribers++;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.subscribers--;
      listeners.delete(entry);
      if (listeners.size === 0 && this.byAccount.get(accountId) === listeners) this.byAccount.delete(accountId);
    };
  }

  /** Live subscriptions, for /metrics. */
  get subscriberCount(): number {
    return this.subscribers;
  }

  /** Hands a committed batch to the subscribers of its accounts; `ids` are the store's answer to insertBatch. */
  publish(records: readonly NewRequestRecord[], ids: StoredIds): void {
    if (this.byAccount.size === 0) return;
    for (let i = 0; i < records.length; i++) {
      const listeners = this.byAccount.get(records[i]!.accountId);
      if (!listeners) continue;
      const record = storedRecord(records[i]!, ids.idAt(i));
      for (const listener of listeners) {
        try {
          listener(record);
        } catch (error) {
          // A broken subscriber must not cost the others their records or the inspector its loop.
          this.log?.error({ err: error }, 'inspector stream subscriber failed');
        }
      }
    }
  }
}
