import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { ResetCode, type MuxStream, type RequestHead, type ResponseHead } from '@svcrouter/protocol';
import type { LocalTarget } from './local-target.js';

/** One line of the agent's request log. */
export interface RequestLog {
  method: string;
  path: string;
  status: number;
  durationMs: number;
}

/** Network errors that mean "the local service is not there" rather than "it failed mid-way". */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);
/** Logged for a request the visitor abandoned before it completed (nginx's "client closed request"). */
const STATUS_VISITOR_LEFT = 499;

/**
 * Forwards visitor streams to one local service. Plain requests go through an undici Pool,
 * which keeps connections to the origin alive between requests (the main per-request saving
 * over http.request); upgrades (WebSocket…) use node:http, which hands back the raw socket
 * and passes non-101 answers through unchanged.
 */
export class OriginProxy {
  private readonly pool: Pool;

  constructor(
    readonly target: LocalTarget,
    private readonly onLog: (log: RequestLog) => void,
  ) {
    this.pool = new Pool(target.origin, {
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect: target.protocol === 'https:' ? { rejectUnauthorized: false } : undefined,
    });
  }

  /** Serves one visitor request arriving on `stream`. Never throws; failures reset the stream. */
  handle(stream: MuxStream): void {
    const head = stream.meta as RequestHead;
    if (head.u) this.handleUpgrade(stream, head);
    else this.handleRequest(stream, head);
  }

  /** Closes pooled origin connections. */
  async close(): Promise<void> {
    await this.pool.destroy().catch(() => undefined);
  }

  private handleRequest(stream: MuxStream, head: RequestHead): void {
    const started = performance.now();
    // The edge says whether a body follows; without one the stream's read side is already ended.
    // undici destroys a stream body once it has read it to the end, and the MuxStream must live
    // on to carry the response, so the body reaches undici through a PassThrough of its own.
    let body: PassThrough | null = null;
    if (head.b === 1) {
      body = new PassThrough();
      stream.pipe(body);
    } else {
      stream.resume();
    }
    let status = 0;
    let controller: Dispatcher.DispatchController | undefined;
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      this.onLog({ method: head.m, path: head.p, status, durationMs: performance.now() - started });
    };
    // The visitor went away (RESET from the edge) or the session closed: stop the origin. A
    // request still queued in the pool has no controller yet; onRequestStart checks `destroyed`.
    let visitorLeft = false;
    const visitorGone = (): void => {
      if (finished) return;
      visitorLeft = true;
      body?.destroy();
      controller?.abort(new Error('visitor went away'));
    };
    stream.on('error', visitorGone);
    stream.on('close', visitorGone);
    stream.on('drain', () => controller?.resume());

    this.pool.dispatch(
      {
        origin: this.target.origin,
        method: head.m,
        path: head.p,
        headers: head.h,
        body,
      },
      {
        onRequestStart(ctl) {
          controller = ctl;
          if (stream.destroyed) ctl.abort(new Error('visitor went away'));
        },
        onResponseStart(ctl, statusCode, headers) {
          status = statusCode;
          const response: ResponseHead = { s: statusCode, h: flattenHeaders(headers) };
          stream.sendHeaders(response);
        },
        onResponseData(ctl, chunk) {
          if (!stream.write(chunk)) ctl.pause();
        },
        onResponseEnd() {
          finish();
          stream.end();
        },
        onResponseError(_ctl, error) {
          const code = (error as NodeJS.ErrnoException).code ?? '';
          if (visitorLeft) {
            // Our own abort: the origin did nothing wrong, and a 502 in the log would say it did.
            status = STATUS_VISITOR_LEFT;
          } else if (status === 0) {
            status = 502;
            stream.reset(UNREACHABLE_CODES.has(code) ? ResetCode.UPSTREAM_UNREACHABLE : ResetCode.UPSTREAM_ERROR);
          } else {
            stream.reset(ResetCode.UPSTREAM_ERROR);
          }
          finish();
        },
      },
    );
  }

  private handleUpgrade(stream: MuxStream, head: RequestHead): void {
    const started = performance.now();
    const url = new URL(head.p, this.target.origin);
    const transport = this.target.protocol === 'https:' ? https : http;
    const request = transport.request(url, {
      method: head.m,
      headers: pairsToObject(head.h),
      agent: false,
      rejectUnauthorized: false,
    } as http.RequestOptions);
    const log = (status: number): void =>
      this.onLog({ method: head.m, path: head.p, status, durationMs: performance.now() - started });
    stream.on('error', () => request.destroy());
    request.on('upgrade', (response, socket: Socket, upgradeHead) => {
      socket.setNoDelay(true);
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
      stream.sendHeaders({ s: response.statusCode ?? 502, h: response.rawHeaders } satisfies ResponseHead);
      response.pipe(stream);
      response.on('end', () => log(response.statusCode ?? 0));
      response.on('error', () => stream.reset(ResetCode.UPSTREAM_ERROR));
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      stream.reset(UNREACHABLE_CODES.has(error.code ?? '') ? ResetCode.UPSTREAM_UNREACHABLE : ResetCode.UPSTREAM_ERROR);
      log(502);
    });
    // Upgrade requests carry no body before the 101; the raw bytes start after it.
    request.end();
  }
}

/** Turns undici's header object into flat pairs, keeping repeated headers (set-cookie) apart. */
function flattenHeaders(headers: Record<string, string | string[] | undefined>): string[] {
  const flat: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) flat.push(name, item);
    else flat.push(name, value);
  }
  return flat;
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
