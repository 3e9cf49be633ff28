import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { ResetCode, streamDuplex, type CallbackStream, type RequestHead, type ResponseHead, type StreamDuplex } from '@svcrouter/protocol';
import { isOriginForm } from './h1-request.js';
import type { ExchangeTap } from './capture.js';
import { applyHostRewrite, rewriteLocation, type HostRewrite } from './host-header.js';
import type { LocalTarget } from './local-target.js';
import { OriginExchange, resetCodeFor, type RequestLog } from './origin-exchange.js';
import { OriginPool, originAddress, type OriginAddress } from './origin-pool.js';
import { H2OriginPool } from './h2-origin-pool.js';
import { H2Exchange, isGrpcRequest } from './h2-exchange.js';
import { refuseGrpc } from './grpc-refusal.js';

export type { RequestLog };

/**
 * Forwards visitor streams to one local service. Plain requests go over our own HTTP/1.1
 * client (OriginExchange) on keep-alive connections from an OriginPool: a general-purpose
 * client spends more CPU per request than the rest of the agent together. Upgrades
 * (WebSocket…) use node:http, which hands back the raw socket and passes non-101 answers
 * through unchanged; they are rare and long-lived, so its cost does not matter there.
 */
export class OriginProxy {
  private readonly pool: OriginPool;
  /** The HTTP/2 connection of a `proto: 'h2'` target; undefined for HTTP/1.1. */
  private readonly h2Pool: H2OriginPool | undefined;
  private readonly address: OriginAddress;

  constructor(
    readonly target: LocalTarget,
    private readonly onLog: (log: RequestLog) => void,
    /** Host header rewrite for dev servers; undefined forwards the public Host unchanged. */
    private readonly hostRewrite?: HostRewrite,
    /** Starts the inspector's capture of one request (before the host rewrite); absent when capture is off. */
    private readonly tapFor?: (head: RequestHead) => ExchangeTap,
  ) {
    this.address = originAddress(target);
    this.pool = new OriginPool(this.address);
    if (target.proto === 'h2') this.h2Pool = new H2OriginPool(this.address);
  }

  /**
   * Serves one visitor request arriving on `stream`: a plain request drives the stream's
   * callbacks itself; an upgrade wraps it in a Duplex, to be piped to the origin's socket.
   * Never throws; failures reset the stream.
   */
  handle(stream: CallbackStream): void {
    const head = stream.meta as RequestHead;
    const tap = this.tapFor?.(head);
    const editResponseHeaders = this.hostRewrite && this.rewriteHost(head, this.hostRewrite);
    if (!head.u) {
      if (this.h2Pool !== undefined) {
        const scheme = this.address.tls ? 'https' : 'http';
        new H2Exchange(this.h2Pool, stream, head, scheme, this.target.hostPort, this.onLog, editResponseHeaders, tap).start();
        return;
      }
      // gRPC exists only over HTTP/2: an HTTP/1.1 request would fail at the origin with no
      // word of why, so the call is answered here with a status that says it.
      if (isGrpcRequest(head)) return refuseGrpc(stream, head, this.onLog, tap);
      new OriginExchange(this.pool, stream, head, this.onLog, editResponseHeaders, tap).start();
      return;
    }
    const duplex = streamDuplex(stream);
    duplex.on('error', () => undefined);
    try {
      this.handleUpgrade(duplex, head, editResponseHeaders, tap);
    } catch {
      // node:http refuses what it cannot send (a space in the path, a bad header name): this
      // request fails, as an unreachable origin would, and nothing else does.
      duplex.reset(ResetCode.UPSTREAM_ERROR);
    }
  }

  /** Closes pooled origin connections; requests still in flight on them fail. */
  close(): Promise<void> {
    this.pool.close();
    this.h2Pool?.close();
    return Promise.resolve();
  }

  /** Sends the rewritten Host; returns the edit that points local redirects back at the visitor's URL. */
  private rewriteHost(head: RequestHead, rewrite: HostRewrite): (headers: string[]) => void {
    applyHostRewrite(head, rewrite);
    return (headers) => rewriteLocation(headers, rewrite, head);
  }

  private handleUpgrade(
    stream: StreamDuplex,
    head: RequestHead,
    editResponseHeaders?: (headers: string[]) => void,
    tap?: ExchangeTap,
  ): void {
    const started = performance.now();
    // Scheme, host and port are the local target's and nothing else: the visitor's target is
    // only ever a path, never resolved against the target's URL, so `//other:6379/` or
    // `http://other/` cannot send the agent anywhere but its own local service.
    if (!isOriginForm(head.p)) {
      stream.reset(ResetCode.UPSTREAM_ERROR);
      return;
    }
    const transport = this.address.tls ? https : http;
    const request = transport.request({
      host: this.address.host,
      port: this.address.port,
      path: head.p,
      method: head.m,
      headers: pairsToObject(head.h),
      agent: false,
      rejectUnauthorized: false,
    } as http.RequestOptions);
    const log = (status: number): void => {
      const entry = { method: head.m, path: head.p, status, durationMs: performance.now() - started };
      tap?.done(entry);
      this.onLog(entry);
    };
    stream.on('error', () => request.destroy());
    request.on('upgrade', (response, socket: Socket, upgradeHead) => {
      socket.setNoDelay(true);
      tap?.response(response.statusCode ?? 101, response.rawHeaders);
      stream.sendHeaders({ s: response.statusCode ?? 101, h: response.rawHeaders } satisfies ResponseHead);
      log(response.statusCode ?? 101);
      if (upgradeHead.length > 0) stream.write(upgradeHead);
      socket.pipe(stream);
      stream.pipe(socket);
      socket.on('error', () => stream.reset(ResetCode.UPSTREAM_ERROR));
      // Both directions ended cleanly: the pipes have ended the socket, which closes once its
      // last bytes are out; destroying it here could drop them. Otherwise (reset) cut it.
      stream.on('close', () => {
        if (!stream.readableEnded || !stream.writableFinished) socket.destroy();
      });
    });
    request.on('response', (response) => {
      // Refused: whatever the visitor sent after its head goes nowhere.
      stream.resume();
      editResponseHeaders?.(response.rawHeaders);
      tap?.response(response.statusCode ?? 502, response.rawHeaders);
      stream.sendHeaders({ s: response.statusCode ?? 502, h: response.rawHeaders } satisfies ResponseHead);
      response.pipe(stream);
      response.on('end', () => log(response.statusCode ?? 0));
      response.on('error', () => stream.reset(ResetCode.UPSTREAM_ERROR));
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      stream.reset(resetCodeFor(error));
      log(502);
    });
    // Upgrade requests carry no body before the 101; the raw bytes start after it.
    request.end();
  }
}

/** Flat pairs to node:http's header object; repeated names become arrays. */
function pairsToObject(pairs: string[]): http.OutgoingHttpHeaders {
  const headers: http.OutgoingHttpHeaders = {};
  for (let i = 0; i < pairs.length; i += 2) {
    const name = pairs[i]!.toLowerCase();
    const value = pairs[i + 1]!;
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else headers[name] = Array.isArray(existing) ? [...existing, value] : [String(existing), value];
  }
  return headers;
}
