import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { checkTunnel, TunnelFieldsSchema, TunnelNameSchema } from '../config-schema.js';
import { apiError, readBody, type Send } from './http-json.js';

/** Largest body of POST /api/tunnels, bytes: a tunnel's settings are a few hundred. */
const MAX_TUNNEL_REQUEST_BYTES = 64 * 1024;

/** The body of POST /api/tunnels: a tunnel as a config file declares it, plus its name. */
export const NewTunnelSchema = TunnelFieldsSchema.extend({ name: TunnelNameSchema }).superRefine(checkTunnel);
export type NewTunnel = z.infer<typeof NewTunnelSchema>;

/** A tunnel of the running agent as the agent API shows it. */
export interface ApiTunnel {
  name: string;
  /** Public URL. */
  url: string;
  /** HTTP version spoken to the local service: `http1` or `h2`. */
  proto: string;
  /** Local target URL. */
  local: string;
  hostHeader: string | null;
  /** Whether the inspector captures this tunnel's requests. */
  inspect: boolean;
  /** Paths served by other local services, each with its target URL; absent without routes. */
  routes?: Array<{ path: string; local: string }>;
}

/** An expected refusal of the agent API: status, stable code and a sentence. */
export class TunnelControlError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the agent API drives: the running agent's tunnels. */
export interface TunnelControl {
  list(): ApiTunnel[];
  /** Starts a tunnel over the agent's session; rejects with TunnelControlError. */
  add(tunnel: NewTunnel): Promise<ApiTunnel>;
  /** Stops the tunnel named `name`; resolves once its hostname is offline, undefined when there is none. */
  remove(name: string): Promise<ApiTunnel | undefined>;
}

/** Where the agent puts its control once its tunnels are live; the API answers 503 before that. */
export interface TunnelControlSlot {
  current: TunnelControl | undefined;
}

/** GET/POST /api/tunnels and DELETE /api/tunnels/:name. */
export async function handleTunnelsApi(
  slot: TunnelControlSlot,
  parts: string[],
  request: IncomingMessage,
  response: ServerResponse,
  send: Send,
): Promise<void> {
  const method = request.method ?? 'GET';
  const control = slot.current;
  const allowed = parts.length === 2 ? 'GET, POST' : 'DELETE';
  if (parts.length > 3) return send(response, 404, apiError('not_found', `no such endpoint: ${method} /${parts.join('/')}`));
  if (!allowed.split(', ').includes(method)) {
    response.setHeader('allow', allowed);
    return send(response, 405, apiError('method_not_allowed', `${method} is not allowed here; use ${allowed}`));
  }
  if (!control) return send(response, 503, apiError('starting', 'the agent is still starting its tunnels; try again in a moment'));
  if (method === 'GET') return send(response, 200, { tunnels: control.list() });
  try {
    if (method === 'DELETE') {
      const name = decodedName(parts[2]!);
      if (name === undefined)
        return send(response, 400, apiError('invalid_request', 'the tunnel name in the path is not valid percent-encoding'));
      const removed = await control.remove(name);
      if (!removed) return send(response, 404, apiError('not_found', `no tunnel named "${name}" in this agent`));
      response.writeHead(204, { 'cache-control': 'no-store' }).end();
      return;
    }
    const body = await newTunnelBody(request);
    return send(response, 201, await control.add(body));
  } catch (error) {
    if (!(error instanceof TunnelControlError)) throw error;
    send(response, error.status, apiError(error.code, error.message));
  }
}

/** A path segment decoded, or undefined when its percent-encoding is broken (`%E0`). */
function decodedName(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The parsed and checked body of POST /api/tunnels; rejects with the precise refusal. */
async function newTunnelBody(request: IncomingMessage): Promise<NewTunnel> {
  if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
    throw new TunnelControlError(415, 'unsupported_media_type', 'send the tunnel as application/json');
  }
  const text = await readBody(request, MAX_TUNNEL_REQUEST_BYTES);
  if (text === undefined)
    throw new TunnelControlError(413, 'payload_too_large', `a tunnel is at most ${MAX_TUNNEL_REQUEST_BYTES} bytes of JSON`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new TunnelControlError(400, 'invalid_json', 'the body is not JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new TunnelControlError(400, 'invalid_request', 'the body is a JSON object such as {"name":"web","addr":3000}');
  }
  const parsed = NewTunnelSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(NewTunnelSchema.shape).join(', ');
    throw new TunnelControlError(400, 'invalid_request', `unknown key "${issue.keys[0]}": a tunnel takes ${known}`);
  }
  const where = issue.path.join('.') || 'body';
  const missing = issue.path.length === 1 && !(String(issue.path[0]) in json);
  throw new TunnelControlError(400, 'invalid_request', missing ? `${where} is required` : `${where}: ${issue.message}`);
}
