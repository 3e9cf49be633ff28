import { Messages } from '@svcrouter/protocol';

/** Codes the client itself gives when there is no API error body to read. */
export const ClientErrorCode = {
  /** The server could not be reached (refused, DNS, reset, aborted by the network). */
  UNREACHABLE: 'unreachable',
  /** The answer was not the API's JSON (a proxy's HTML page, a cut-off body…). */
  UNEXPECTED_RESPONSE: 'unexpected_response',
} as const;

/**
 * Every failed REST call rejects with this: `status` is the HTTP status (0 when the server
 * was not reached), `code` the API's stable `error` code (`not_found`, `domain_exists`…) and
 * `message` its sentence for humans.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  /** The error for a non-2xx answer whose body is `text`. */
  static fromResponse(status: number, text: string): ApiError {
    const body = parseErrorBody(text);
    if (!body) return new ApiError(status, ClientErrorCode.UNEXPECTED_RESPONSE, `the API answered ${status} without its JSON error body`);
    // 401 carries only `{"error":"unauthorized"}`; the agent's sentence says what to fix.
    const message = body.message ?? (status === 401 ? Messages.TOKEN_INVALID : `the API answered ${status} ${body.error}`);
    return new ApiError(status, body.error, message);
  }
}

function parseErrorBody(text: string): { error: string; message?: string } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null || !('error' in body) || typeof body.error !== 'string') return undefined;
  const message = 'message' in body && typeof body.message === 'string' ? body.message : undefined;
  return message === undefined ? { error: body.error } : { error: body.error, message };
}
