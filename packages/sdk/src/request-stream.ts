import { ApiError, ClientErrorCode } from './api-error.js';
import { buildUrl, send, withTextStatus, type Endpoint } from './api-transport.js';
import type { CapturedRequest, DroppedNotice, RequestStreamEvent, StreamFilters } from './api-types.js';
import type { paths } from './generated/api-types.js';
import { parseSse } from './sse.js';

/** Path of the live request stream (checked against the generated routes). */
export const REQUEST_STREAM_PATH = '/v1/requests/stream' satisfies keyof paths;

/**
 * Follows GET /v1/requests/stream: yields each `request` and `dropped` event as it arrives.
 * Ends when `signal` aborts (quietly: a `for await` loop just stops) or the server ends the
 * stream; rejects with ApiError when the server refuses it or sends what is not the API's.
 */
export async function* followRequests(
  endpoint: Endpoint,
  filters: StreamFilters,
  signal: AbortSignal | undefined,
): AsyncGenerator<RequestStreamEvent> {
  // Our own controller, so leaving the loop early (break) also closes the connection.
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal?.aborted) return;
    const url = buildUrl(endpoint, REQUEST_STREAM_PATH, { query: withTextStatus(filters) });
    let response: Response;
    try {
      response = await send(endpoint, url, {
        headers: { authorization: `Bearer ${endpoint.token}`, accept: 'text/event-stream' },
        signal: controller.signal,
      });
    } catch (error) {
      if (controller.signal.aborted) return;
      throw error;
    }
    if (!response.ok) throw ApiError.fromResponse(response.status, await response.text().catch(() => ''));
    if (!response.body || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      throw new ApiError(
        response.status,
        ClientErrorCode.UNEXPECTED_RESPONSE,
        `${REQUEST_STREAM_PATH} did not answer with an event stream`,
      );
    }
    const text = response.body.pipeThrough(new TextDecoderStream());
    try {
      for await (const event of parseSse(text)) {
        if (event.event === 'request') yield { type: 'request', id: event.id, request: parseJson<CapturedRequest>(event.data) };
        else if (event.event === 'dropped') {
          const notice = parseJson<DroppedNotice>(event.data);
          yield { type: 'dropped', dropped: notice.dropped, message: notice.message };
        }
        // Other event names are for later servers; skipping them keeps old clients working.
      }
    } catch (error) {
      if (controller.signal.aborted) return;
      if (error instanceof ApiError) throw error;
      throw new ApiError(
        0,
        ClientErrorCode.UNREACHABLE,
        `the request stream broke off: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    controller.abort();
  }
}

function parseJson<T>(data: string): T {
  try {
    // The server builds each event from the same schema as GET /v1/requests items.
    return JSON.parse(data) as T;
  } catch {
    throw new ApiError(200, ClientErrorCode.UNEXPECTED_RESPONSE, `${REQUEST_STREAM_PATH} sent an event whose data is not JSON`);
  }
}
