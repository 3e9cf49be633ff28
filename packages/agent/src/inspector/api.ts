import type { IncomingMessage, ServerResponse } from 'node:http';
import { ReplayError, type InspectedRequest, type Inspector } from '@svcrouter/sdk';
import { z } from 'zod';
import { apiError, readBody, type Send } from './http-json.js';
import { handleTunnelsApi, type TunnelControlSlot } from './tunnels-api.js';

/** Largest replay body accepted, bytes: edited bodies are typed by people, not uploads. */
const MAX_REPLAY_REQUEST_BYTES = 4 * 1024 * 1024;
/** Heartbeat comment on the live stream, so proxies and browsers keep it open. */
const EVENTS_KEEPALIVE_MS = 15_000;
/**
 * Bytes of events a client may leave unread before its stream is dropped: a reader that stopped
 * reading (a stalled script, a frozen tab) would otherwise hold every record written to it in the
 * agent's memory, without end. The web UI reconnects and reloads the list.
 */
const EVENTS_MAX_UNREAD_BYTES = 8 * 1024 * 1024;

const ReplayEditsSchema = z.strictObject({
  method: z
    .string()
    .regex(/^[A-Za-z]{1,20}$/, 'a method is 1-20 letters')
    .transform((method) => method.toUpperCase())
    .optional(),
  path: z.string().startsWith('/', 'a path starts with /').max(8192).optional(),
  headers: z
    .array(z.tuple([z.string().min(1).max(256), z.string().max(8192)]))
    .max(200)
    .optional(),
  body: z.string().optional(),
});

/**
 * The JSON API: requests, one request, replay, tunnels, and the live event stream for the UI.
 * With `tunnels` (the agent's), /api/tunnels lists, starts and stops the agent's tunnels;
 * without (an inspector on its own), it lists the inspected ones.
 */
export async function handleApi(
  inspector: Inspector,
  request: IncomingMessage,
  response: ServerResponse,
  send: Send,
  tunnels?: TunnelControlSlot,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://inspector');
  const parts = url.pathname.split('/').filter(Boolean); // ['api', …]
  const method = request.method ?? 'GET';
  if (tunnels && parts[1] === 'tunnels') return handleTunnelsApi(tunnels, parts, request, response, send);
  if (method === 'GET' && parts.length === 2 && parts[1] === 'requests') return send(response, 200, { requests: inspector.list() });
  if (method === 'GET' && parts.length === 2 && parts[1] === 'tunnels') {
    return send(response, 200, {
      tunnels: inspector.listTunnels().map((t) => ({ url: t.url, local: t.target.origin, hostHeader: t.hostHeader ?? null })),
    });
  }
  if (method === 'GET' && parts.length === 2 && parts[1] === 'events') return followEvents(inspector, request, response);
  if (parts[1] === 'requests' && parts.length >= 3) {
    const id = parts[2]!;
    if (method === 'GET' && parts.length === 3) {
      const record = inspector.get(id);
      return record ? send(response, 200, record) : send(response, 404, apiError('not_found', `no captured request ${id}`));
    }
    if (method === 'POST' && parts.length === 4 && parts[3] === 'replay') return replay(inspector, id, request, response, send);
  }
  send(response, 404, apiError('not_found', `no such endpoint: ${method} ${url.pathname}`));
}

async function replay(inspector: Inspector, id: string, request: IncomingMessage, response: ServerResponse, send: Send): Promise<void> {
  const text = await readBody(request, MAX_REPLAY_REQUEST_BYTES);
  if (text === undefined)
    return send(response, 413, apiError('too_large', `a replay request is at most ${MAX_REPLAY_REQUEST_BYTES} bytes`));
  let json: unknown = {};
  if (text.trim() !== '') {
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
      return send(response, 415, apiError('unsupported_media_type', 'send the edits as application/json'));
    }
    try {
      json = JSON.parse(text);
    } catch {
      return send(response, 400, apiError('invalid_json', 'the body is not JSON'));
    }
  }
  const edits = ReplayEditsSchema.safeParse(json);
  if (!edits.success) {
    const issue = edits.error.issues[0]!;
    return send(response, 400, apiError('invalid_edit', `${issue.path.join('.') || 'body'}: ${issue.message}`));
  }
  try {
    const record: InspectedRequest = await inspector.replay(id, edits.data);
    send(response, 200, record);
  } catch (error) {
    if (!(error instanceof ReplayError)) throw error;
    const status = error.code === 'NOT_FOUND' ? 404 : error.code === 'BODY_TRUNCATED' ? 409 : 400;
    send(response, status, apiError(error.code.toLowerCase(), error.message));
  }
}

/** Server-sent events: one `request` event per captured request, as it completes. */
function followEvents(inspector: Inspector, request: IncomingMessage, response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
  response.write(': live\n\n');
  const onRequest = (record: InspectedRequest): void => {
    if (response.writableLength > EVENTS_MAX_UNREAD_BYTES) return void response.destroy();
    response.write(`event: request\ndata: ${JSON.stringify(record)}\n\n`);
  };
  inspector.on('request', onRequest);
  const keepalive = setInterval(() => response.write(': keepalive\n\n'), EVENTS_KEEPALIVE_MS);
  keepalive.unref();
  request.on('close', () => {
    clearInterval(keepalive);
    inspector.off('request', onRequest);
  });
}
