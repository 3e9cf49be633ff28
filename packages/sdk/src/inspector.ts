import { EventEmitter } from 'node:events';
import type { RequestHead } from '@svcrouter/protocol';
import { CapturedExchange, type CaptureSink, type ExchangeTap, type InspectedRequest } from './capture.js';
import { hostRewrite, applyHostRewrite } from './host-header.js';
import type { LocalTarget } from './local-target.js';
import { sendReplay } from './replay.js';

/** Bytes kept of each request and response body by default. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
/** Requests kept by default; the oldest go first. */
export const DEFAULT_MAX_REQUESTS = 200;

/** Options of an Inspector. */
export interface InspectOptions {
  /** Bytes kept of each body (default DEFAULT_MAX_BODY_BYTES); longer bodies are marked truncated. */
  maxBodyBytes?: number;
  /** Requests kept (default DEFAULT_MAX_REQUESTS). */
  maxRequests?: number;
}

/** What a replay may change; anything left out is sent as captured. */
export interface ReplayEdits {
  method?: string;
  /** Path and query, starting with `/`. */
  path?: string;
  /** The whole header list, replacing the captured one. */
  headers?: Array<[string, string]>;
  /** A new body as UTF-8 text. */
  body?: string;
}

/** Why a replay could not be sent; `code` is stable for API answers. */
export class ReplayError extends Error {
  override name = 'ReplayError';
  constructor(
    readonly code: 'NOT_FOUND' | 'BODY_TRUNCATED' | 'INVALID_EDIT',
    message: string,
  ) {
    super(message);
  }
}

/** A tunnel as the inspector needs it: where it forwards, and how. */
export interface InspectedTunnel {
  url: string;
  target: LocalTarget;
  hostHeader?: string;
}

/** The events of an Inspector. */
export interface InspectorEvents {
  /** A request (or a replay) completed and was captured. */
  request: [record: InspectedRequest];
}

/** A captured exchange and the tunnel a replay of it goes to. */
type Entry = CapturedExchange & { readonly tunnel: InspectedTunnel };

/**
 * Captures the requests of one or more tunnels, bounded, and replays them against the local
 * service. Long-lived state shared by the tunnels that use it, hence a class. Capture runs
 * beside the forwarding: it keeps references to at most maxBodyBytes of each body and records
 * on completion, in a ring of maxRequests slots (a request's number picks its slot).
 */
export class Inspector extends EventEmitter<InspectorEvents> implements CaptureSink {
  readonly maxBodyBytes: number;
  readonly maxRequests: number;
  /** Request n (its id `req_<n>`) sits at slot n % maxRequests until request n + maxRequests replaces it. */
  private readonly ring: Array<Entry | undefined>;
  private readonly tunnels = new Map<string, InspectedTunnel>();
  private nextSeq = 1;
  /** Stored this loop turn, not yet emitted (only while someone listens). */
  private announcing: CapturedExchange[] = [];

  constructor(options: InspectOptions = {}) {
    super();
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.maxRequests = options.maxRequests ?? DEFAULT_MAX_REQUESTS;
    this.ring = new Array<Entry | undefined>(this.maxRequests).fill(undefined);
  }

  /** Captured requests, newest first. */
  list(): InspectedRequest[] {
    const records: InspectedRequest[] = [];
    const oldest = Math.max(1, this.nextSeq - this.maxRequests);
    for (let seq = this.nextSeq - 1; seq >= oldest; seq--) records.push(this.ring[seq % this.maxRequests]!.record());
    return records;
  }

  /** One captured request, or undefined. */
  get(id: string): InspectedRequest | undefined {
    return this.find(id)?.record();
  }

  /** The tunnels capturing into this inspector. */
  listTunnels(): InspectedTunnel[] {
    return [...this.tunnels.values()];
  }

  /**
   * Sends a captured request again to its tunnel's local service, with `edits` applied, and
   * resolves with the new captured request (`replayOf` names the original). Rejects with
   * ReplayError for an unknown id, a truncated body that was not replaced, or a bad edit.
   */
  async replay(id: string, edits: ReplayEdits = {}): Promise<InspectedRequest> {
    const found = this.find(id);
    if (!found) throw new ReplayError('NOT_FOUND', `no captured request ${id}`);
    const record = found.record();
    const tunnel = found.tunnel;
    if (edits.body === undefined && record.request.body.truncated) {
      throw new ReplayError('BODY_TRUNCATED', `the captured body was cut at ${this.maxBodyBytes} bytes; send the body to replay with`);
    }
    const path = edits.path ?? record.path;
    if (!path.startsWith('/')) throw new ReplayError('INVALID_EDIT', 'path must start with /');
    const method = edits.method ?? record.method;
    if (!/^[A-Z]{1,20}$/.test(method)) throw new ReplayError('INVALID_EDIT', 'method must be 1-20 capital letters');
    const body = edits.body !== undefined ? Buffer.from(edits.body, 'utf8') : Buffer.from(record.request.body.base64, 'base64');
    const head: RequestHead = { m: method, p: path, h: (edits.headers ?? record.request.headers).flat(), t: '' };
    const finished = new Promise<InspectedRequest>((resolve) => {
      const tap = this.tapFor(tunnel, head, id, resolve);
      const rewrite = hostRewrite(tunnel.hostHeader, tunnel.target);
      const sent: RequestHead = { ...head, h: [...head.h] };
      if (rewrite) applyHostRewrite(sent, rewrite);
      sendReplay(tunnel.target, sent, body, tap);
    });
    return finished;
  }

  /** @internal The capture hook of one tunnel's forwarding; it reads `tunnel.url` when a record is built. */
  tap(tunnel: InspectedTunnel): (head: RequestHead) => ExchangeTap {
    // The host rewrite edits the head in place after capture starts: only then is it copied.
    const copyHeaders = hostRewrite(tunnel.hostHeader, tunnel.target) !== undefined;
    return (head) => new CapturedExchange(head, tunnel, this.maxBodyBytes, this, copyHeaders);
  }

  /** @internal The tunnel is live: list it. */
  track(tunnel: InspectedTunnel): void {
    this.tunnels.set(tunnel.url, tunnel);
  }

  /** @internal The tunnel closed: its captures stay, it is no longer listed. */
  forget(tunnel: InspectedTunnel): void {
    if (this.tunnels.get(tunnel.url) === tunnel) this.tunnels.delete(tunnel.url);
  }

  private find(id: string): Entry | undefined {
    const match = /^req_(\d{1,15})$/.exec(id);
    if (!match) return undefined;
    const seq = Number(match[1]);
    const entry = this.ring[seq % this.maxRequests];
    return entry?.seq === seq ? entry : undefined;
  }

  private tapFor(tunnel: InspectedTunnel, head: RequestHead, replayOf: string, onStored: (record: InspectedRequest) => void): ExchangeTap {
    const sink: CaptureSink = {
      stored: (entry) => {
        this.stored(entry);
        onStored(entry.record());
      },
    };
    return new CapturedExchange(head, tunnel, this.maxBodyBytes, sink, false, replayOf);
  }

  /**
   * @internal Keeps a finished capture at once (list() and get() see it). While someone
   * listens, it is announced in the check phase with the others of the same loop turn, so
   * listeners (the inspector's live stream serializes each record) run after the request's own
   * work, not inside it.
   */
  stored(entry: CapturedExchange): void {
    const seq = this.nextSeq++;
    entry.seq = seq;
    this.ring[seq % this.maxRequests] = entry as Entry;
    if (this.listenerCount('request') === 0) return;
    this.announcing.push(entry);
    if (this.announcing.length === 1) setImmediate(() => this.announce());
  }

  private announce(): void {
    const entries = this.announcing;
    this.announcing = [];
    for (const entry of entries) this.emit('request', entry.record());
  }
}
