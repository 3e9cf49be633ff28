import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import {
  AGENT_VERSION_HEADER,
  ERROR_CODE_HEADER,
  ErrorCode,
  agreeHeartbeat,
  EDGE_SILENT_INTERVALS,
  FEATURES_HEADER,
  HEARTBEAT_HEADER,
  Mux,
  PROTOCOL_HEADER,
  SessionLimitMessages,
  FEATURE_TRAILERS,
  LOCAL_FEATURES,
  parseFeatures,
  SESSION_UPGRADE,
  SVC_VERSION,
  type AgentMessage,
} from '@svcrouter/protocol';
import type { Authenticate } from '../auth/index.js';
import { EdgeSession, type SessionHandlers } from './edge-session.js';
import type { SessionLimits } from './session-limits.js';

export type { Authenticate };

export interface SessionAcceptorDeps {
  authenticate: Authenticate;
  handlers: SessionHandlers;
  heartbeatMs: number;
  /** Sessions this node takes, in all and per account. */
  limits: SessionLimits;
  log: Logger;
  /** Called for every session that becomes live, and again when it ends. */
  onOpen(session: EdgeSession): void;
  onClose(session: EdgeSession): void;
}

const UNAUTHORIZED_BODY = '{"error":"unauthorized"}';

/** Whether an upgrade request asks for an agent session. */
export function isSessionUpgrade(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === SESSION_UPGRADE;
}

/**
 * Accepts an agent's `Upgrade: svc-mux/1` request: authenticates the bearer token, answers
 * 101, and runs the multiplexed session on the same socket. A bad token gets the API's exact
 * 401 body, so agents and API clients see one behaviour.
 */
export async function acceptSession(req: IncomingMessage, socket: Duplex, head: Buffer, deps: SessionAcceptorDeps): Promise<void> {
  socket.on('error', () => socket.destroy());
  let identity;
  try {
    identity = await deps.authenticate(req.headers.authorization);
  } catch (error) {
    deps.log.error({ err: error }, 'session authentication failed');
    socket.end('HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    return;
  }
  if (!identity) {
    socket.end(
      `HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: ${UNAUTHORIZED_BODY.length}\r\nconnection: close\r\n\r\n${UNAUTHORIZED_BODY}`,
    );
    return;
  }
  if (socket.destroyed) return;
  const accountId = identity.account.id;
  const refusal = deps.limits.admit(accountId);
  if (refusal) {
    const { perNode, perAccount } = deps.limits.config;
    const message = refusal === 'node' ? SessionLimitMessages.node(perNode) : SessionLimitMessages.account(perAccount);
    deps.log.warn({ accountId, limit: refusal }, 'agent session refused: session limit');
    // 503 for the node (another node, or later, may take it), 429 for the account's own count.
    const body = JSON.stringify({ error: 'session_limit', message });
    const status = refusal === 'node' ? '503 Service Unavailable' : '429 Too Many Requests';
    socket.end(
      `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${ERROR_CODE_HEADER}: ${ErrorCode.SESSION_LIMIT}\r\nretry-after: 30\r\nconnection: close\r\n\r\n${body}`,
    );
    return;
  }
  const tcp = socket as Socket;
  tcp.setNoDelay?.(true);
  tcp.setKeepAlive?.(true, 10_000);
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${SESSION_UPGRADE}\r\n${PROTOCOL_HEADER}: 1\r\n${FEATURES_HEADER}: ${LOCAL_FEATURES}\r\n\r\n`,
  );
  if (head.length > 0) socket.unshift(head);

  const sessionId = `ses_${randomBytes(8).toString('hex')}`;
  const version = String(req.headers[AGENT_VERSION_HEADER] ?? 'unknown').slice(0, 40);
  const ip = clientIp(req);
  let session: EdgeSession | undefined;
  const agentFeatures = parseFeatures(req.headers[FEATURES_HEADER]);
  const mux = new Mux(socket, {
    role: 'acceptor',
    peerTrailers: agentFeatures.has(FEATURE_TRAILERS),
    onControl: (message) => session?.onControl(message as AgentMessage),
  });
  const log = deps.log.child({ sessionId, accountId: identity.account.id });
  session = new EdgeSession(sessionId, identity.account.id, identity.key.id, ip, version, mux, deps.handlers, log);
  session.agentFeatures = agentFeatures;
  const live = session;
  mux.once('close', (error?: Error) => {
    deps.limits.release(accountId);
    live.onClosed();
    deps.onClose(live);
    log.info({ reason: error?.message }, 'agent session closed');
  });
  // The agent keeps the heartbeat; the edge answers it and checks for silence in one sweep
  // for all sessions, so a quiet session costs no timer and no PING of the edge's own.
  const heartbeatMs = agreeHeartbeat(req.headers[HEARTBEAT_HEADER], deps.heartbeatMs);
  mux.watchPeer(heartbeatMs * EDGE_SILENT_INTERVALS);
  deps.onOpen(live);
  live.send({ type: 'hello', sessionId, serverVersion: SVC_VERSION, heartbeatMs });
  log.info({ agentVersion: version, ip }, 'agent session opened');
}

/** The connecting peer's address, without the IPv4-mapped IPv6 prefix. */
export function clientIp(req: { socket: { remoteAddress?: string | undefined } }): string {
  const address = req.socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
