import { MAX_REQUEST_PAGE, type RequestQuery, type RequestRecord, type RequestRepo } from '../store/index.js';
import { EventStream } from './event-stream.js';
import { matchesFilter, storeFilter } from './request-filters.js';
import { RequestEvents, requestEvent } from './request-event.js';
import type { Route, RouteContext } from './router.js';
import { CapturedRequest, DroppedEvent, RequestStreamQuery } from './schemas.js';
import { parsePart, queryObject } from './validation.js';

/** How often an idle stream sends `: keep-alive`. */
export const STREAM_KEEP_ALIVE_MS = 15_000;
/** Records a stream holds for a client that reads too slowly before it drops them. */
export const STREAM_MAX_QUEUED = 1000;
/** How long a stream gathers records before it writes them, at most (one write per period, not per batch). */
export const STREAM_COALESCE_MS = 100;

/** Stored records a stream writes at once before it checks whether its client keeps up. */
const BACKFILL_WRITE_EVENTS = 64;

/** A live feed of stored records (the inspector's RequestHub). */
export interface LiveRequests {
  /**
   * Calls `listener` with the account's records of each stored batch, in capture order, once
   * they are stored; returns the unsubscribe function. Every subscriber gets the same record
   * objects, so each record's event is encoded once for all of them (request-event.ts).
   */
  subscribe(accountId: string, listener: (records: readonly RequestRecord[]) => void): () => void;
}

/** What the stream route needs. */
export interface RequestStreamDeps {
  store: { requests: Pick<RequestRepo, 'list'> };
  liveRequests: LiveRequests;
  /** Defaults STREAM_KEEP_ALIVE_MS, STREAM_MAX_QUEUED and STREAM_COALESCE_MS; tests make them small. */
  requestStream?: { keepAliveMs?: number; maxQueued?: number; coalesceMs?: number };
}

const DESCRIPTION = [
  `Server-sent events. Each \`request\` event has \`id:\` the record id and \`data:\` one record exactly as GET /v1/requests lists it, and it is sent once the record is stored: records stored within ${STREAM_COALESCE_MS} ms of each other go out together.`,
  'With `since`, the stored records at or after that time come first, oldest first, then live records follow without gaps or repeats.',
  'A client that reads too slowly gets a `dropped` event with the count of records it missed (read them with GET /v1/requests); the stream itself never slows the tunnels.',
  `An idle stream sends the comment \`: keep-alive\` every ${STREAM_KEEP_ALIVE_MS / 1000} s.`,
].join(' ');

/** GET /v1/requests/stream: the Traffic Inspector's records as they are stored. */
export function requestStreamRoutes(deps: RequestStreamDeps): Route[] {
  // Shared by every stream of this API: a published batch is encoded once for all of them.
  const liveEvents = new RequestEvents();
  const maxQueued = deps.requestStream?.maxQueued ?? STREAM_MAX_QUEUED;
  const keepAliveMs = deps.requestStream?.keepAliveMs ?? STREAM_KEEP_ALIVE_MS;
  const coalesceMs = deps.requestStream?.coalesceMs ?? STREAM_COALESCE_MS;
  return [
    {
      method: 'GET',
      path: '/v1/requests/stream',
      doc: {
        summary: 'Live stream of captured requests',
        description: DESCRIPTION,
        tags: ['requests'],
        query: RequestStreamQuery,
        responses: {
          200: {
            description: 'text/event-stream of `request` events (data: CapturedRequest) and `dropped` events (data: DroppedEvent)',
            schema: CapturedRequest.or(DroppedEvent),
            contentType: 'text/event-stream',
          },
        },
        errors: [400, 401],
      },
      handler: (ctx) => streamRequests(ctx, deps, liveEvents, { maxQueued, keepAliveMs, coalesceMs }),
    },
  ];
}

async function streamRequests(
  ctx: RouteContext,
  deps: RequestStreamDeps,
  liveEvents: RequestEvents,
  limits: { maxQueued: number; keepAliveMs: number; coalesceMs: number },
): Promise<void> {
  const accountId = ctx.account.id;
  const filter = storeFilter(parsePart(RequestStreamQuery, queryObject(ctx.query), 'query parameter'));
  const stream = new EventStream(ctx.res, { ...limits, droppedData });
  const send = (record: RequestRecord): void => stream.sendEncoded(requestEvent(record));
  // Without filters (an open dashboard's table) each record only needs its owner checked.
  const filtered = Object.values(filter).some((value) => value !== undefined);
  // Subscribed before the store is read: a record stored meanwhile is in the store's answer,
  // or held here, or both (then told apart by id), never in neither.
  let held: RequestRecord[] | undefined = filter.since === undefined ? undefined : [];
  const unsubscribe = deps.liveRequests.subscribe(accountId, (records) => {
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      if (record.accountId !== accountId || (filtered && !matchesFilter(record, filter))) continue;
      if (!held) stream.sendEncoded(liveEvents.at(records, i));
      else if (held.length < limits.maxQueued) held.push(record);
      else stream.countDropped(1);
    }
  });
  stream.whenClosed(unsubscribe);
  if (!held) return;
  const stored = await storedSince(deps, accountId, filter, stream);
  const sent = new Set<string>();
  for (let i = stored.length - 1; i >= 0 && !stream.closed; i--) {
    send(stored[i]!);
    sent.add(stored[i]!.id);
    // Paced by the client, a page at a time: stored records are not dropped, only live ones beyond the bound.
    if (i % BACKFILL_WRITE_EVENTS === 0) {
      stream.flush();
      if (stream.waiting) await stream.ready();
    }
  }
  const live = held;
  held = undefined;
  for (const record of live) if (!sent.has(record.id)) send(record);
}

/** The account's stored records matching `filter`, newest first, every page of them (stops early if the client left). */
async function storedSince(
  deps: RequestStreamDeps,
  accountId: string,
  filter: Omit<RequestQuery, 'limit'>,
  stream: EventStream,
): Promise<RequestRecord[]> {
  const all: RequestRecord[] = [];
  let before: RequestQuery['before'];
  while (!stream.closed) {
    const page = await deps.store.requests.list(accountId, { ...filter, limit: MAX_REQUEST_PAGE, before });
    all.push(...page.filter((record) => record.accountId === accountId));
    const last = page.at(-1);
    if (!last || page.length < MAX_REQUEST_PAGE) break;
    before = { timestamp: last.timestamp, id: last.id };
  }
  return all;
}

function droppedData(count: number): string {
  const message = `${count} request record${count === 1 ? ' was' : 's were'} not sent because this client read too slowly; list them with GET /v1/requests`;
  return JSON.stringify({ dropped: count, message });
}
