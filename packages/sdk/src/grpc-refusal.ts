import type { CallbackStream, RequestHead, ResponseHead } from '@svcrouter/protocol';
import type { ExchangeTap } from './capture.js';
import type { RequestLog } from './request-log.js';

/** gRPC's UNAVAILABLE: the call may succeed once the tunnel is set up right. */
export const GRPC_UNAVAILABLE = '14';
/** Why a gRPC call to an HTTP/1.1 tunnel fails, as the gRPC client reports it. */
export const GRPC_NEEDS_H2 = 'svcRouter: gRPC needs HTTP/2 to the local service; start the tunnel with --proto h2 (or an h2c:// target)';

/**
 * Answers a gRPC call on a tunnel that speaks HTTP/1.1 to its local service: 502 with
 * `grpc-status: 14` (UNAVAILABLE) and a `grpc-message` that says why, in one header block that
 * ends the response (gRPC's "trailers-only" answer), so a gRPC client shows the reason rather
 * than "Received HTTP status code 502". The request body is read and dropped.
 */
export function refuseGrpc(stream: CallbackStream, head: RequestHead, onLog: (log: RequestLog) => void, tap?: ExchangeTap): void {
  const started = performance.now();
  const headers = ['content-type', 'application/grpc', 'grpc-status', GRPC_UNAVAILABLE, 'grpc-message', encodeURI(GRPC_NEEDS_H2)];
  stream.attach({ onReset: () => undefined });
  tap?.response(502, headers);
  stream.sendHeaders({ s: 502, h: headers } satisfies ResponseHead, true);
  const log = { method: head.m, path: head.p, status: 502, durationMs: performance.now() - started };
  tap?.done(log);
  onLog(log);
}
