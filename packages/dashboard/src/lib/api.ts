import { connection } from './connection.js';

/** An error answer of the API: its stable code and the sentence shown to people. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Sentences for the answers that carry no `message` (401 is exactly `{"error":"unauthorized"}`). */
const FALLBACK_MESSAGES: Record<number, string> = {
  401: 'your session has ended; sign in again',
  502: 'the server is unreachable',
  503: 'the server is unavailable',
};

let csrfToken: string | undefined;
let onUnauthorized: () => void = () => undefined;

/** The session's CSRF token, sent with every state-changing request (cookie sessions need it). */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** Called when an authenticated call answers 401: the session expired or was revoked. */
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

/**
 * Calls the REST API on this origin with the session cookie. Resolves with the parsed JSON
 * body (undefined for 204) or rejects with an ApiError whose message is the server's own.
 * A network failure marks the connection as lost, so the UI shows "reconnecting…".
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    connection.lost();
    throw new ApiError(0, 'network', 'cannot reach the server; reconnecting…');
  }
  connection.reached();
  if (response.status === 204) return undefined as T;
  const parsed = await readJson(response);
  if (response.ok) return parsed as T;
  if (response.status === 401 && !path.startsWith('/auth/')) onUnauthorized();
  throw toApiError(response.status, parsed);
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function toApiError(status: number, body: unknown): ApiError {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof fields.error === 'string' ? fields.error : 'http_' + String(status);
  const message =
    typeof fields.message === 'string' && fields.message !== ''
      ? fields.message
      : (FALLBACK_MESSAGES[status] ?? `the server answered ${status}${code.startsWith('http_') ? '' : ` (${code})`}`);
  return new ApiError(status, code, message);
}

/** The sentence to show for any thrown value: never `[object Object]`. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error && error.message !== '') return error.message;
  return 'something went wrong; try again';
}
