import { statusClassRange, type RequestQuery, type RequestRecord } from '../store/index.js';
import type { z } from 'zod';
import type { CapturedRequest } from './schemas.js';

/** The record filters of GET /v1/requests and its stream, as validated by their query schemas. */
export interface RequestFilterQuery {
  host?: string | undefined;
  tunnel?: string | undefined;
  status?: string | undefined;
  method?: string | undefined;
  since?: string | undefined;
}

/** The store's filters for a validated query: `status` is an exact status (404) or a class (4xx). */
export function storeFilter(query: RequestFilterQuery): Omit<RequestQuery, 'limit'> {
  const filter: Omit<RequestQuery, 'limit'> = {};
  if (query.host !== undefined) filter.host = query.host.toLowerCase();
  if (query.tunnel !== undefined) filter.tunnelId = query.tunnel;
  if (query.status !== undefined) {
    if (/x$/i.test(query.status)) filter.statusClass = Number(query.status[0]);
    else filter.status = Number(query.status);
  }
  if (query.method !== undefined) filter.method = query.method.toUpperCase();
  if (query.since !== undefined) filter.since = Date.parse(query.since);
  return filter;
}

/**
 * Whether a stored record passes the filters, as the store's list decides it (records carry
 * the stored, lower-cased host; `method` is upper-cased by storeFilter).
 */
export function matchesFilter(record: RequestRecord, filter: Omit<RequestQuery, 'limit'>): boolean {
  if (filter.host !== undefined && record.host !== filter.host) return false;
  if (filter.tunnelId !== undefined && record.tunnelId !== filter.tunnelId) return false;
  if (filter.status !== undefined && record.status !== filter.status) return false;
  if (filter.statusClass !== undefined) {
    const [from, to] = statusClassRange(filter.statusClass);
    if (record.status < from || record.status > to) return false;
  }
  if (filter.method !== undefined && record.method.toUpperCase() !== filter.method) return false;
  if (filter.since !== undefined && record.timestamp < filter.since) return false;
  if (filter.until !== undefined && record.timestamp >= filter.until) return false;
  return true;
}

/** One record as GET /v1/requests and its stream show it. */
export function capturedRequestItem(row: RequestRecord): z.input<typeof CapturedRequest> {
  return {
    id: row.id,
    tunnelId: row.tunnelId ?? null,
    timestamp: new Date(row.timestamp).toISOString(),
    method: row.method,
    path: row.path,
    status: row.status,
    durationMs: Math.round(row.durationMs),
    bytes: Math.round(row.bytes),
    ip: row.ip,
    userAgent: row.userAgent,
    proto: row.proto,
    host: row.host,
    target: row.target ?? null,
  };
}
