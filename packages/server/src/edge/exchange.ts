import {
  Feature,
  ResetCode,
  isResponseHead,
  trailerFields,
  type CallbackStreamHandler,
  type Mux,
  type RequestHead,
  type StreamResetError,
} from '@svcrouter/protocol';
import { declaredLength, requestHead, responseHeaders, type HeadSource, type RequestKind } from './forwarding.js';
import { bandwidthPage, offlinePage, unreachablePage, upstreamErrorPage, type EdgePage } from './pages.js';
import { pickMember } from './pool.js';
import { targetOf } from './route-labels.js';
import type { AbsoluteTarget } from './request-target.js';
import type { Binding } from './router.js';
import type { Identity } from '../policy/index.js';
import { shapeRequest } from './traffic-shape.js';

/** Methods whose request is retried on another pool member after the member died before answering (RFC 9110 §9.2.2, without PUT/DELETE, which a dead member may have applied). */
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the edge learns about each proxied request (for the inspector and metering). */
export interface Exchange {
  binding: Binding | undefined;
  host: string;
  method: string;
  path: string;
  status: number;
  startedAt: number;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  ip: string;
  userAgent: string;
  proto: string;
  /** The local target that served it (a route's or the tunnel's own `host:port`) when the tunnel has routes; else undefined. */
  readonly target?: string | undefined;
}

/** Observes finished exchanges; must be cheap and never throw (it runs on the request path). */
export type ExchangeObserver = (exchange: Exchange) => void;

/**
 * Meters body bytes of an account as they pass, before they are forwarded; false means the
 * account's transfer quota is gone and the transfer must stop (usage metering).
 */
export type ByteMeter = (accountId: string, bytes: number) => boolean;

/**
 * The visitor's side of an exchange: how its response reaches the visitor. Each path implements
 * it: the lean HTTP/1.1 path (lean/lean-proxy.ts), Node's HTTP/1.1 and HTTP/2 server (proxy.ts)
 * and an upgraded socket (upgrade.ts). The exchange decides what is written and when; a writer
 * only knows how to write it on its connection.
 */
export interface VisitorWriter {
  /** Answers with one of the edge's own pages as the whole response (before any head went out). */
  sendPage(page: EdgePage): void;
  /**
   * Writes an informational (1xx, never 101) head before the response head: the origin's (103
   * Early Hints, say), or the edge's own 100 Continue. Headers already filtered; one this
   * connection cannot carry is dropped, as a 1xx never changes the outcome of the exchange.
   */
  writeInterim(status: number, headers: string[]): void;
  /**
   * Writes the origin's response head, its headers already filtered by the forwarding rules.
   * False when this connection cannot carry it (a status or a field it must refuse): nothing
   * was written, and the exchange answers 502 instead.
   */
  writeHead(status: number, headers: string[]): boolean;
  /** Writes response body bytes; false: the visitor is full, and the exchange waits for `visitorDrained`. */
  writeBody(chunk: Buffer): boolean;
  /**
   * The body is complete, with the origin's trailers (checked fields) if it sent any; the writer
   * sends them where its protocol has room (HTTP/2 trailers, a chunked body's last chunk) and
   * calls the exchange's `finish` once the response has left.
   */
  endBody(trailers: readonly string[] | undefined): void;
  /**
   * The response cannot be completed after its head went out, and must look cut, never complete:
   * HTTP/2 resets the stream with `code` (RFC 9113 §8.1 allows NO_ERROR only after a complete
   * response), HTTP/1.1 closes the connection without a chunked body's last chunk (a short
   * Content-Length body is cut by the close itself), an upgraded socket is reset. Called again
   * once the visitor's side is closed, it does nothing.
   */
  abort(code: CutCode): void;
  /**
   * The origin answered before the visitor's upload ended: stop forwarding it (nothing more is
   * counted or metered) and tell the visitor to stop sending, as its protocol allows
   * (`bytesRead`: how much of the body the edge took).
   */
  stopUpload(bytesRead: number): void;
}

/**
 * How an unfinished response ends for the visitor, in HTTP/2's words: INTERNAL_ERROR when the
 * edge or the upstream could not complete it (the agent died or dropped, the local service
 * failed, a body ended short of its Content-Length or ran past it, the quota ran out, the edge
 * shut down), CANCEL when the visitor left first. HTTP/1.1 and upgraded sockets have one way to
 * say either: the connection is cut.
 */
export type CutCode = 'INTERNAL_ERROR' | 'CANCEL';

/** What the exchange does with its stream: the CallbackStream itself, or the Duplex a path wrapped it in. */
export interface ExchangeStream {
  pause(): void;
  resume(): void;
  reset(code?: string): void;
  /** The agent's TRAILERS payload (unchecked), once the stream ended with one. */
  readonly trailers: unknown;
}

/** How one visitor request arrived: the exchange's record, and what the forwarding rules need of it. */
export interface ExchangeInit {
  /** The routed host, normalised. */
  host: string;
  method: string;
  /** The request target as recorded (an absolute-form target's path). */
  path: string;
  ip: string;
  userAgent: string;
  proto: string;
  /** The visitor came over TLS (X-Forwarded-Proto). */
  secure: boolean;
  /** The visitor's absolute-form target, when it sent one. */
  absolute: AbsoluteTarget | undefined;
}

/** What every exchange of an edge shares. */
export interface ExchangeDeps {
  /** Sees every finished exchange (inspector, metering, metrics). */
  observe: ExchangeObserver;
  /** Meters body bytes on the data path; absent: nothing is metered. */
  meter: ByteMeter | undefined;
}

/**
 * One visitor request on a tunnel hostname, from routing to its finish step: it builds the
 * request head by the forwarding rules, opens the stream, filters and checks the response head,
 * meters body bytes both ways, picks the edge's page for each failure, and finishes once
 * (duration, then the observer). It writes to the visitor only through its `VisitorWriter`,
 * and is itself the record the observer sees.
 *
 * A CallbackStream drives it directly (it is the stream's handler); a path that pipes bytes wraps
 * the stream in a Duplex (streamDuplex) and forwards its events to the same methods
 * (`followStream` in proxy.ts).
 */
export class EdgeExchange implements Exchange, CallbackStreamHandler {
  binding: Binding | undefined = undefined;
  readonly host: string;
  readonly method: string;
  readonly path: string;
  status = 0;
  readonly startedAt = performance.now();
  durationMs = 0;
  bytesIn = 0;
  bytesOut = 0;
  readonly ip: string;
  readonly userAgent: string;
  readonly proto: string;
  /** The visitor came over TLS. */
  readonly secure: boolean;
  /** The signed-in visitor the access rules admitted (single sign-on): forwarded as headers. */
  identity: Identity | undefined = undefined;
  private readonly absolute: AbsoluteTarget | undefined;
  /** The edge's meter, held here: the body path reads it per chunk, without a hop through `deps`. */
  private readonly meter: ByteMeter | undefined;
  private writer!: VisitorWriter;
  private stream: ExchangeStream | undefined = undefined;
  private kind: RequestKind = 'request';
  /** The transfer quota ran out: nothing more is metered or forwarded. */
  private cut = false;
  /** The response completed while the upload still flowed, and the upload was stopped. */
  private answeredEarly = false;
  /** Body bytes the response head's Content-Length still owes the visitor; -1: no length to hold it to. */
  private bodyLeft = -1;
  private finished = false;
  /** The pool member this exchange counts as in flight on (see `open`); undefined: none. */
  private member: Binding | undefined = undefined;
  /** Sends the request again over `binding` (a pool's other member); set by a path that can, for pooled bindings only. */
  private again: (() => void) | undefined = undefined;
  /** Pool members this request already failed on; made at the first retry. */
  private tried: Binding[] | undefined = undefined;
  /** The target a traffic rule rewrote the request to (sent instead of the visitor's); undefined: unchanged. */
  forwardTarget: string | undefined = undefined;
  /** The whole body, read for a webhook check: sent from here, and again on a pool retry; undefined: streamed. */
  requestBody: Buffer | undefined = undefined;

  constructor(
    init: ExchangeInit,
    private readonly deps: ExchangeDeps,
  ) {
    this.host = init.host;
    this.method = init.method;
    this.path = init.path;
    this.ip = init.ip;
    this.userAgent = init.userAgent;
    this.proto = init.proto;
    this.secure = init.secure;
    this.absolute = init.absolute;
    this.meter = deps.meter;
  }

  get target(): string | undefined {
    return targetOf(this.binding, this.path);
  }

  /** Sets the writer of the visitor's side; each path's writer does so when it is made, before routing. */
  respondThrough(writer: VisitorWriter): void {
    this.writer = writer;
  }

  /** Answers with one of the edge's pages (a refusal, a failure before the head) and finishes. */
  refuse(page: EdgePage): void {
    this.status = page.status;
    this.writer.sendPage(page);
    this.finish();
  }

  /**
   * Opens the exchange's stream on its binding's session: `open` gets the request head built by
   * the forwarding rules and opens the kind of stream its path drives. When the session cannot
   * open one, the visitor gets the offline page and the result is undefined.
   *
   * `expectContinue`: the visitor sent `Expect: 100-continue`. It goes to the origin, whose 100
   * (or refusal) comes back as INFO; an agent too old to relay it gets the request without it,
   * and the edge answers 100 itself.
   */
  open<S extends ExchangeStream>(
    source: HeadSource,
    kind: RequestKind,
    body: boolean,
    open: (mux: Mux, head: RequestHead) => S,
    expectContinue = false,
  ): S | undefined {
    const binding = this.binding!;
    this.kind = kind;
    const forwardExpect = expectContinue && binding.session.agentFeatures?.has(Feature.INFO) === true;
    if (expectContinue && !forwardExpect) this.writer.writeInterim(100, []);
    const head = requestHead(source, {
      tunnelId: binding.tunnelId,
      host: this.host,
      ip: this.ip,
      secure: this.secure,
      kind,
      body,
      absolute: this.absolute,
      forwardExpect,
      dropAuthorization: binding.access?.consumesAuthorization === true,
      identity: this.identity,
    });
    // Traffic rules (a rewritten target, header rules): one check for tunnels without them.
    if (binding.traffic !== undefined) shapeRequest(head, binding.traffic, this.forwardTarget);
    let stream: S;
    try {
      stream = open(binding.session.mux, head);
    } catch {
      this.refuse(offlinePage(this.host));
      return undefined;
    }
    this.stream = stream;
    if (binding.pool !== undefined) this.countOn(binding);
    return stream;
  }

  /**
   * Lets a failed attempt on a pool member be sent again to another member: `again` opens the
   * request anew over `binding`. Paths call it only for pooled bindings, so other requests
   * allocate nothing for it.
   */
  retryWith(again: () => void): void {
    this.again = again;
  }

  // ---- from the stream (CallbackStreamHandler, or a StreamDuplex's events) ----

  /**
   * An informational head from the origin (an INFO frame): 100 Continue, 102 Processing, 103
   * Early Hints. One that arrives after the final head (or the edge's page), on an upgrade, or
   * malformed is dropped.
   */
  onInfo(meta: unknown): void {
    if (this.status !== 0 || this.finished || this.kind !== 'request' || !isResponseHead(meta)) return;
    const status = meta.s;
    if (!Number.isInteger(status) || status < 100 || status > 199 || status === 101) return;
    this.writer.writeInterim(status, responseHeaders(meta.h));
  }

  /**
   * The origin's response head. The agent is not trusted: a head of the wrong shape, or one the
   * visitor's connection cannot carry, never reaches the visitor or the inspector. Returns
   * whether the head went out, so body bytes may follow.
   */
  onHeaders(meta: unknown): boolean {
    if (isResponseHead(meta)) {
      // A 101 answers an upgrade: its Upgrade and Connection headers are the point, not hop-by-hop noise.
      let headers = this.kind === 'upgrade' && meta.s === 101 ? meta.h : responseHeaders(meta.h);
      const shaped = this.binding!.traffic?.responseHeaders;
      if (shaped !== undefined && meta.s !== 101) headers = shaped.apply(headers);
      if (this.writer.writeHead(meta.s, headers)) {
        this.status = meta.s;
        // A HEAD's, a 204's or a 304's Content-Length describes a body that is never sent.
        const bodiless = this.method === 'HEAD' || meta.s === 204 || meta.s === 304 || meta.s === 101;
        if (!bodiless) this.bodyLeft = declaredLength(headers);
        return true;
      }
    }
    this.stream!.reset(ResetCode.UPSTREAM_ERROR);
    this.refuse(upstreamErrorPage(this.host, 'invalid response headers'));
    return false;
  }

  onData(chunk: Buffer): void {
    // Body bytes before the response head would go out in the framing of a kept-alive
    // connection's previous response, or as its next head: a visitor's connection must never
    // carry bytes the agent framed itself.
    if (this.status === 0) {
      this.stream!.reset(ResetCode.UPSTREAM_ERROR);
      return this.refuse(upstreamErrorPage(this.host, 'a response body before its head'));
    }
    this.bytesOut += chunk.length;
    // More than the head announced: the visitor would read the rest as something else (its next
    // response on a kept-alive connection). The response is not what it said it was: cut.
    if (this.bodyLeft >= 0 && (this.bodyLeft -= chunk.length) < 0) {
      this.stream!.reset(ResetCode.UPSTREAM_ERROR);
      return this.abort('INTERNAL_ERROR');
    }
    if ((this.meter !== undefined || this.cut) && !this.metered(chunk.length)) return;
    if (!this.writer.writeBody(chunk)) this.stream!.pause();
  }

  onEnd(): void {
    // A clean end short of the announced length (an agent that does not check it) is still a cut.
    // After a cut (or once the visitor left) nothing more is written.
    if (this.finished) return;
    if (this.bodyLeft > 0) return this.abort('INTERNAL_ERROR');
    const trailers = this.stream!.trailers;
    this.writer.endBody(trailers === undefined ? undefined : trailerFields(trailers));
  }

  onReset(error: StreamResetError): void {
    this.failed(error.code);
  }

  /**
   * The stream failed with `code` (a reset by the agent, the session closing): a page before the
   * head, a cut response after it (a reset before its trailers came too).
   */
  failed(code: string): void {
    if (this.status !== 0) return this.abort('INTERNAL_ERROR');
    if (this.again !== undefined && this.retried(code)) return;
    this.refuse(
      code === ResetCode.UPSTREAM_UNREACHABLE || code === ResetCode.UPSTREAM_REFUSED
        ? unreachablePage(this.host, this.target ?? this.binding!.local)
        : upstreamErrorPage(this.host, code === 'SESSION_CLOSED' ? 'the agent disconnected' : 'the local service failed'),
    );
  }

  // ---- from the visitor's side ----

  /** The visitor can take more after `writeBody` returned false. */
  visitorDrained(): void {
    this.stream!.resume();
  }

  /**
   * The response has left in full. When the upload is still open, the origin answered without
   * reading it all (a 413, a 401, an early 200): the upload stops, and a NO_ERROR reset frees
   * the stream on both sides, which would otherwise wait forever.
   */
  responded(uploadOpen: boolean): void {
    if (!uploadOpen || this.answeredEarly) return;
    this.answeredEarly = true;
    this.writer.stopUpload(this.bytesIn);
    this.stream?.reset(ResetCode.NO_ERROR);
  }

  /**
   * The visitor left before the response completed: the agent is told to stop the origin, and
   * whatever is left of the visitor's side is cancelled (an HTTP/2 stream still open on one side).
   */
  visitorGone(): void {
    this.stream?.reset(ResetCode.CANCEL);
    if (this.status !== 0 && !this.finished) this.writer.abort('CANCEL');
    this.finish();
  }

  /**
   * Counts and meters `bytes` the visitor sent up (a request body, an upgraded connection's
   * bytes), before they are forwarded. False: the quota ran out, the exchange was cut off,
   * and they must not be forwarded.
   */
  uploaded(bytes: number): boolean {
    this.bytesIn += bytes;
    return (this.meter === undefined && !this.cut) || this.metered(bytes);
  }

  /** Whether the exchange finished (answered, or the visitor left). */
  get isFinished(): boolean {
    return this.finished;
  }

  /** The finish step every exchange ends with, once: its duration, then the observer (inspector, metering). */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.member !== undefined) this.member.inFlight!--;
    this.durationMs = performance.now() - this.startedAt;
    this.deps.observe(this);
  }

  /**
   * Sends the request to another member of the pool after its member failed before answering,
   * when that cannot repeat anything: the agent sent nothing to its local service (refused, or
   * the tunnel unknown there), or the member's agent is gone and the method is idempotent. Only
   * when no byte of a request body was taken from the visitor, as bodies are never buffered.
   * False: no retry (another member left or none fits), the failure is answered as usual.
   */
  private retried(code: string): boolean {
    // A body read whole for a webhook check is sent again from memory; a streamed one cannot be.
    if (this.finished || (this.bytesIn > 0 && this.requestBody === undefined)) return false;
    const notSent = code === ResetCode.UPSTREAM_REFUSED || code === 'NOT_FOUND';
    if (!notSent && !(code === 'SESSION_CLOSED' && IDEMPOTENT.has(this.method))) return false;
    const failed = this.binding!;
    const tried = (this.tried ??= []);
    tried.push(failed);
    const next = failed.pool === undefined ? undefined : pickMember(failed.pool, tried);
    if (next === undefined) return false;
    this.binding = next;
    this.again!();
    return true;
  }

  /** Counts this exchange in flight on a pool member (moved along by a retry). */
  private countOn(member: Binding): void {
    if (this.member !== undefined) this.member.inFlight!--;
    this.member = member;
    member.inFlight!++;
  }

  /** Meters body bytes of either direction; false once the account's quota is gone (the exchange is then cut off). */
  private metered(bytes: number): boolean {
    if (this.cut) return false;
    const meter = this.meter;
    if (meter === undefined || meter(this.binding!.accountId, bytes)) return true;
    // Quota used up mid-transfer: both directions stop, and the chunk that crossed the limit is not forwarded.
    this.cut = true;
    this.stream!.reset(ResetCode.CANCEL);
    if (this.status !== 0) this.abort('INTERNAL_ERROR');
    else this.refuse(bandwidthPage());
    return false;
  }

  /**
   * The one way an unfinished response ends, once its head is out: the writer cuts it in its
   * protocol's terms (see `VisitorWriter.abort`), and the exchange finishes.
   */
  private abort(code: CutCode): void {
    if (this.finished) return;
    this.writer.abort(code);
    this.finish();
  }
}
