import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import {
  AGENT_VERSION_HEADER,
  ALL_FEATURES,
  ERROR_CODE_HEADER,
  ErrorCode,
  FEATURES_HEADER,
  HEARTBEAT_HEADER,
  parseFeatures,
  Messages,
  SESSION_PATH,
  SESSION_UPGRADE,
  SVC_VERSION,
  SvcError,
} from '@svcrouter/protocol';

/** Where and how to dial the edge. */
export interface DialOptions {
  /** Edge base URL, `http://…` or `https://…`. */
  serverUrl: string;
  /** Agent token, sent as a Bearer credential and never logged. */
  token: string;
  /** Extra CA certificates (PEM) to trust for an https edge, e.g. a dev CA. */
  ca?: string | Buffer;
  /** Gives up on a dial that has not upgraded after this long. */
  timeoutMs?: number;
  /** Optional protocol features to announce (`Feature` values); default: all this agent speaks. */
  features?: readonly string[];
  /** Heartbeat interval to ask the edge for, ms (1,000 to 60,000); default: the edge's. */
  heartbeatMs?: number;
}

/**
 * Dials the edge and upgrades the HTTP/1.1 connection to a tunnel session.
 * Resolves with the raw socket (TCP_NODELAY on); rejects with SvcError TOKEN_INVALID on 401,
 * or EDGE_UNREACHABLE when no edge answered the upgrade (callers may retry those).
 */
export async function dialSession(options: DialOptions): Promise<Socket> {
  return (await dialEdge(options)).socket;
}

/** An upgraded session socket and the optional frames the edge said it understands. */
export interface EdgeConnection {
  socket: Socket;
  /** Names from the edge's FEATURES_HEADER (empty for an older edge). */
  features: Set<string>;
}

/** As dialSession, and tells which optional frames the edge understands. */
export function dialEdge(options: DialOptions): Promise<EdgeConnection> {
  const url = new URL(SESSION_PATH, options.serverUrl);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(url, {
      method: 'GET',
      headers: {
        connection: 'Upgrade',
        upgrade: SESSION_UPGRADE,
        authorization: `Bearer ${options.token}`,
        [AGENT_VERSION_HEADER]: SVC_VERSION,
        [FEATURES_HEADER]: (options.features ?? ALL_FEATURES).join(','),
        ...(options.heartbeatMs === undefined ? {} : { [HEARTBEAT_HEADER]: String(options.heartbeatMs) }),
      },
      ca: options.ca,
      agent: false,
      timeout: options.timeoutMs ?? 10_000,
    });
    request.on('upgrade', (response, socket, head) => {
      // The dial timeout was for the upgrade only; heartbeats watch the session from here on.
      socket.setTimeout(0);
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 10_000);
      if (head.length > 0) socket.unshift(head);
      resolve({ socket: socket as Socket, features: parseFeatures(response.headers[FEATURES_HEADER]) });
    });
    request.on('response', (response) => {
      if (response.statusCode === 401) {
        response.resume();
        reject(new SvcError(ErrorCode.TOKEN_INVALID, Messages.TOKEN_INVALID));
      } else if (response.headers[ERROR_CODE_HEADER] === ErrorCode.SESSION_LIMIT) {
        readRefusal(response).then((message) => reject(new SvcError(ErrorCode.SESSION_LIMIT, message ?? Messages.SESSION_LIMIT)), reject);
      } else {
        response.resume();
        reject(unreachable(options.serverUrl, `HTTP ${response.statusCode}, not a svcRouter edge session`));
      }
    });
    request.on('timeout', () => request.destroy(unreachable(options.serverUrl, 'timed out')));
    request.on('error', (error: NodeJS.ErrnoException) => {
      reject(error instanceof SvcError ? error : unreachable(options.serverUrl, error.code ?? error.message));
    });
    request.end();
  });
}

/** Most bytes of a refusal's JSON body read for its message. */
const MAX_REFUSAL_BYTES = 4096;

/** The `message` of a refused upgrade's JSON body, if it has one that fits. */
async function readRefusal(response: http.IncomingMessage): Promise<string | undefined> {
  let text = '';
  for await (const chunk of response) {
    text += String(chunk);
    if (text.length > MAX_REFUSAL_BYTES) return undefined;
  }
  try {
    const message = (JSON.parse(text) as { message?: unknown }).message;
    return typeof message === 'string' && message.startsWith(Messages.SESSION_LIMIT) ? message : undefined;
  } catch {
    return undefined;
  }
}

/** The edge could not be reached; `detail` is the socket's code (ECONNREFUSED…) or what went wrong. */
function unreachable(serverUrl: string, detail: string): SvcError {
  return new SvcError(ErrorCode.EDGE_UNREACHABLE, `cannot reach the svcRouter edge at ${serverUrl} (${detail})`);
}
