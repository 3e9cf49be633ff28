/** An expected API failure: status, stable code and a sentence. The one error class of the API. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Stable error codes of the REST API: the `error` field of every error body. Clients branch
 * on these; the `message` beside them is a sentence for people and may change.
 */
export const ApiErrorCode = {
  /** 400: a path parameter, query parameter or body field is invalid or unknown. */
  INVALID_REQUEST: 'invalid_request',
  /** 400: the body is not parseable JSON. */
  INVALID_JSON: 'invalid_json',
  /** 401: no valid token (the body is exactly `{"error":"unauthorized"}`, no message). */
  UNAUTHORIZED: 'unauthorized',
  /** 401: sign-in with a wrong email or password. */
  INVALID_CREDENTIALS: 'invalid_credentials',
  /** 403: a cookie-authenticated request without the session's X-CSRF-Token, or from a foreign Origin. */
  CSRF_FAILED: 'csrf_failed',
  /** 403: sign-up is turned off (SVC_SIGNUP=closed). */
  SIGNUP_CLOSED: 'signup_closed',
  /** 409: sign-up with an email that already has an account. */
  EMAIL_TAKEN: 'email_taken',
  /** 400: a sign-in link that is unknown, used or expired. */
  LINK_INVALID: 'link_invalid',
  /** 429: too many failed sign-ins for the account or the client IP (see Retry-After). */
  TOO_MANY_ATTEMPTS: 'too_many_attempts',
  /** 404: no such route, or no such resource on the caller's account. */
  NOT_FOUND: 'not_found',
  /** 405: the path exists with other methods (see the Allow header). */
  METHOD_NOT_ALLOWED: 'method_not_allowed',
  /** 409: revoking the last active key of an account without a password would lock it out. */
  LAST_ACTIVE_KEY: 'last_active_key',
  /** 413: the request body is larger than the API reads. */
  PAYLOAD_TOO_LARGE: 'payload_too_large',
  /** 415: a body was sent with a content type other than application/json. */
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
  /** 503: the store is locked, full or restarting; retry after the Retry-After seconds. */
  UNAVAILABLE: 'unavailable',
  /** 500: an unexpected failure; details are logged, never returned. */
  INTERNAL: 'internal',
} as const;

/** One of the API's stable error codes. */
export type ApiErrorCodeValue = (typeof ApiErrorCode)[keyof typeof ApiErrorCode];

/** 404 for a resource id that is unknown or belongs to another account (existence is never confirmed). */
export function notFound(resource: string): ApiError {
  // The id is not echoed: a 404 body then carries nothing the caller could not already see.
  return new ApiError(404, ApiErrorCode.NOT_FOUND, `no ${resource} with this id on this account`);
}

/** 400 with a sentence that names the offending field. */
export function invalidRequest(message: string): ApiError {
  return new ApiError(400, ApiErrorCode.INVALID_REQUEST, message);
}
