import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { ApiError, ApiErrorCode } from './errors.js';

export { ApiError };

/** A request on either listener (HTTP/1.1 or HTTP/2). */
export type ApiRequest = IncomingMessage | Http2ServerRequest;
/** A response on either listener. */
export type ApiResponse = ServerResponse | Http2ServerResponse;

/** Largest JSON body the API reads. */
export const MAX_JSON_BODY_BYTES = 64 * 1024;

/** Writes a JSON response. */
export function sendJson(res: ApiResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  (res as ServerResponse).writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/** Writes a text response (Prometheus metrics…). */
export function sendText(res: ApiResponse, status: number, contentType: string, text: string): void {
  (res as ServerResponse).writeHead(status, {
    'content-type': contentType,
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/** Writes an empty response (204…). */
export function sendEmpty(res: ApiResponse, status: number): void {
  (res as ServerResponse).writeHead(status, { 'cache-control': 'no-store' });
  res.end();
}

/**
 * Reads a JSON request body of at most MAX_JSON_BODY_BYTES. An empty body is `undefined`.
 * Throws ApiError 415 for a non-JSON content type, 413 when too large, 400 when malformed.
 */
export async function readJson(req: ApiRequest): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_JSON_BODY_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_JSON_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new ApiError(415, ApiErrorCode.UNSUPPORTED_MEDIA_TYPE, 'send the body as application/json');
  }
  try {
    return JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
  } catch {
    throw new ApiError(400, ApiErrorCode.INVALID_JSON, 'the request body is not valid JSON');
  }
}

function tooLarge(): ApiError {
  return new ApiError(413, ApiErrorCode.PAYLOAD_TOO_LARGE, `the request body exceeds ${MAX_JSON_BODY_BYTES} bytes`);
}
