import type { RequestQuery, RequestRepo } from '../store/index.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { defineRoute } from './define-route.js';
import { invalidRequest } from './errors.js';
import { capturedRequestItem, storeFilter } from './request-filters.js';
import type { Route } from './router.js';
import { REQUESTS_DEFAULT_LIMIT, RequestPage, RequestsQuery } from './schemas.js';

/** What the requests route needs. */
export interface RequestRouteDeps {
  /** The inspector's records in the store. */
  store: { requests: Pick<RequestRepo, 'list'> };
}

/** GET /v1/requests: the Traffic Inspector's records, newest first, cursor-paginated. */
export function requestRoutes(deps: RequestRouteDeps): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/requests',
      tag: 'requests',
      summary: 'Requests captured by the Traffic Inspector',
      description:
        'Newest first. Records are written in batches, so a request appears shortly after it finished. Page with limit and the nextCursor of the previous page.',
      query: RequestsQuery,
      status: 200,
      response: RequestPage,
      responseDescription: 'one page of captured requests',
      async handler({ account, query }) {
        const limit = query.limit ?? REQUESTS_DEFAULT_LIMIT;
        const filter: RequestQuery = { ...storeFilter(query), limit: limit + 1 };
        if (query.cursor !== undefined) {
          const before = decodeCursor(query.cursor);
          if (!before) throw invalidRequest('query parameter "cursor" is malformed; pass the nextCursor of the previous page unchanged');
          filter.before = before;
        }
        if (query.until !== undefined) filter.until = Date.parse(query.until);
        // One extra row tells whether another page exists without a count query.
        // The account check repeats the store's scoping: a record of another account never leaves.
        const rows = (await deps.store.requests.list(account.id, filter)).filter((row) => row.accountId === account.id);
        const page = rows.slice(0, limit);
        const last = page[page.length - 1];
        return {
          requests: page.map(capturedRequestItem),
          nextCursor: rows.length > limit && last ? encodeCursor(last) : null,
        };
      },
    }),
  ];
}
