import type { Logger } from 'pino';
import { storedRecord, type NewRequestRecord, type RequestRecord, type StoredIds } from '../store/index.js';

/**
 * Receives the stored records of one account from one committed batch, in capture order (never
 * an empty list); called on the inspector's write loop, so it must only queue. Every subscriber
 * of the account gets the same record objects, so whatever it derives from a record (its encoded
 * event) can be shared with the other subscribers.
 */
export type RequestListener = (records: readonly RequestRecord[]) => void;

/**
 * Live feed of the Traffic Inspector's records (GET /v1/requests/stream). The inspector
 * publishes each batch once the store has committed it, under the ids the store gave it, so a
 * subscriber sees exactly what GET /v1/requests lists afterwards, and a reader that subscribes
 * first and then lists the store misses nothing in between (it meets some records twice, and
 * tells them apart by id).
 *
 * Publishing without subscribers is one Map size check per batch: no record is copied and no
 * id is built. With subscribers, only records of accounts someone follows are built, once each
 * whatever the number of subscribers, and each subscriber is called once per batch.
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
    const entry: RequestListener = (records) => listener(records);
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
    // A batch usually belongs to one account: no Map of lists for that case.
    let firstAccount: string | undefined;
    let first: RequestRecord[] | undefined;
    let others: Map<string, RequestRecord[]> | undefined;
    for (let i = 0; i < records.length; i++) {
      const accountId = records[i]!.accountId;
      if (!this.byAccount.has(accountId)) continue;
      const record = storedRecord(records[i]!, ids.idAt(i));
      if (first === undefined || accountId === firstAccount) {
        firstAccount = accountId;
        (first ??= []).push(record);
      } else {
        others ??= new Map();
        const list = others.get(accountId);
        if (list) list.push(record);
        else others.set(accountId, [record]);
      }
    }
    if (first) this.deliver(firstAccount!, first);
    if (others) for (const [accountId, list] of others) this.deliver(accountId, list);
  }

  private deliver(accountId: string, records: readonly RequestRecord[]): void {
    for (const listener of this.byAccount.get(accountId) ?? []) {
      try {
        listener(records);
      } catch (error) {
        // A broken subscriber must not cost the others their records or the inspector its loop.
        this.log?.error({ err: error }, 'inspector stream subscriber failed');
      }
    }
  }
}
