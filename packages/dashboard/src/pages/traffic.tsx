import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { EmptyState, ErrorText, PageHeader, TableHead } from '../components/bits.js';
import { RequestDetails } from '../components/request-details.js';
import { api, errorMessage } from '../lib/api.js';
import { formatBytes, formatClock } from '../lib/format.js';
import { followRequests } from '../lib/request-stream.js';
import type { CapturedRequest, RequestPage } from '../lib/types.js';

/** Rows kept from the live stream; older pages add to it on request. */
const MAX_LIVE_ROWS = 500;
/** Rows per page of `GET /v1/requests`. */
const PAGE_SIZE = 50;
/** Records arriving while paused that are kept for Resume. */
const MAX_PENDING = 1000;
/** How far before an empty first page the stream starts, so no request falls between page and stream. */
const STREAM_OVERLAP_MS = 5000;

const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

interface Filters {
  host: string;
  status: string;
  method: string;
}

/** The Traffic Inspector: a live table of captured requests with filters, pause and older pages. */
export function TrafficPage(): JSX.Element {
  const [filters, setFilters] = useState<Filters>({ host: '', status: '', method: '' });
  const [rows, setRows] = useState<CapturedRequest[] | undefined>(undefined);
  const [cursor, setCursor] = useState<string | null>(null);
  const [paused, setPaused] = useState(false);
  const [pending, setPending] = useState<CapturedRequest[]>([]);
  const [streamState, setStreamState] = useState<'connecting' | 'live' | 'reconnecting'>('connecting');
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [selected, setSelected] = useState<CapturedRequest | undefined>(undefined);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;

  useEffect(() => {
    const query = toQuery(filters);
    const seen = new Set<string>();
    let stop: (() => void) | undefined;
    let cancelled = false;
    setRows(undefined);
    setPending([]);
    setNotice(undefined);
    setError(undefined);
    const startedAt = new Date().toISOString();
    api<RequestPage>('GET', `/v1/requests?${withLimit(query).toString()}`)
      .catch((caught: unknown) => {
        setError(errorMessage(caught));
        return { requests: [], nextCursor: null } satisfies RequestPage;
      })
      .then((page) => {
        if (cancelled) return;
        for (const record of page.requests) seen.add(record.id);
        setRows(page.requests);
        setCursor(page.nextCursor);
        // The stream starts at the newest record shown (`since` is inclusive; repeats are
        // skipped by id), or a little before the page was asked for when it was empty.
        const newest = page.requests[0]?.timestamp;
        const since = newest ?? new Date(Date.parse(startedAt) - STREAM_OVERLAP_MS).toISOString();
        stop = followRequests(query, since, {
          onRequest: (record) => {
            if (seen.has(record.id)) return;
            seen.add(record.id);
            if (pausedRef.current) setPending((list) => [record, ...list].slice(0, MAX_PENDING));
            else setRows((list) => insertNewest(list ?? [], [record]));
          },
          onDropped: setNotice,
          onState: setStreamState,
        });
      })
      .catch((caught: unknown) => setError(errorMessage(caught)));
    return () => {
      cancelled = true;
      stop?.();
    };
  }, [filters]);

  const resume = (): void => {
    setRows((list) => insertNewest(list ?? [], pending));
    setPending([]);
    setPaused(false);
  };

  const loadOlder = async (): Promise<void> => {
    if (!cursor) return;
    try {
      const query = withLimit(toQuery(filters));
      query.set('cursor', cursor);
      const page = await api<RequestPage>('GET', `/v1/requests?${query.toString()}`);
      setRows((list) => [...(list ?? []), ...page.requests.filter((r) => !(list ?? []).some((x) => x.id === r.id))]);
      setCursor(page.nextCursor);
    } catch (caught) {
      setError(errorMessage(caught));
    }
  };

  return (
    <section>
      <PageHeader title="Traffic">
        <span class={`live ${streamState}`} role="status">
          {paused ? 'Paused' : streamState === 'live' ? 'Live' : streamState === 'reconnecting' ? 'Reconnecting…' : 'Connecting…'}
        </span>
        {paused ? (
          <span class="row">
            <button type="button" class="primary" onClick={resume}>
              Resume
            </button>
            {pending.length > 0 && <span class="muted">{pending.length} new</span>}
          </span>
        ) : (
          <button type="button" onClick={() => setPaused(true)}>
            Pause
          </button>
        )}
      </PageHeader>
      <FilterBar filters={filters} onChange={setFilters} />
      <ErrorText message={error} />
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {rows === undefined ? null : rows.length === 0 ? (
        <EmptyState>No requests yet: requests to your tunnels appear here as they happen.</EmptyState>
      ) : (
        <RequestTable rows={rows} onSelect={setSelected} />
      )}
      {cursor && rows && rows.length > 0 && (
        <button type="button" onClick={() => void loadOlder()}>
          Load older requests
        </button>
      )}
      {selected && <RequestDetails record={selected} onClose={() => setSelected(undefined)} />}
    </section>
  );
}

function FilterBar({ filters, onChange }: { filters: Filters; onChange: (filters: Filters) => void }): JSX.Element {
  // Labels point at their fields by id rather than wrapping them, so a field's name stays
  // "Method" and does not take in the selected option ("Method any").
  return (
    <form class="filters" role="search" aria-label="Filter requests" onSubmit={(event) => event.preventDefault()}>
      <div class="field">
        <label for="filter-host">Host</label>
        <input
          id="filter-host"
          type="search"
          value={filters.host}
          placeholder="any host"
          spellcheck={false}
          onChange={(event) => onChange({ ...filters, host: event.currentTarget.value.trim() })}
        />
      </div>
      <div class="field">
        <label for="filter-status">Status</label>
        <select id="filter-status" value={filters.status} onChange={(event) => onChange({ ...filters, status: event.currentTarget.value })}>
          <option value="">any</option>
          {STATUS_CLASSES.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-method">Method</label>
        <select id="filter-method" value={filters.method} onChange={(event) => onChange({ ...filters, method: event.currentTarget.value })}>
          <option value="">any</option>
          {METHODS.map((method) => (
            <option key={method} value={method}>
              {method}
            </option>
          ))}
        </select>
      </div>
    </form>
  );
}

function RequestTable({ rows, onSelect }: { rows: CapturedRequest[]; onSelect: (record: CapturedRequest) => void }): JSX.Element {
  return (
    <div class="table-wrap">
      <table class="traffic">
        <TableHead columns={['Time', 'Method', 'Path', 'Status', 'Duration', 'Bytes', 'IP', 'User agent', 'Proto', 'Host', 'Target']} />
        <tbody>
          {rows.map((record) => (
            <tr key={record.id} class="clickable" data-request-id={record.id} onClick={() => onSelect(record)}>
              <td>{formatClock(record.timestamp)}</td>
              <td>{record.method}</td>
              <td class="path">
                <button
                  type="button"
                  class="link"
                  title="Show every field"
                  onClick={(event) => (event.stopPropagation(), onSelect(record))}
                >
                  {record.path}
                </button>
              </td>
              <td>
                <span class={`status s${String(record.status).charAt(0)}`}>{record.status === 0 ? '—' : record.status}</span>
              </td>
              <td>{record.durationMs} ms</td>
              <td>{formatBytes(record.bytes)}</td>
              <td>{record.ip}</td>
              <td class="ua" title={record.userAgent}>
                {record.userAgent}
              </td>
              <td>{record.proto}</td>
              <td>{record.host}</td>
              <td title="The local service that served it (tunnels with routes)">{record.target ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function toQuery(filters: Filters): URLSearchParams {
  const query = new URLSearchParams();
  if (filters.host) query.set('host', filters.host);
  if (filters.status) query.set('status', filters.status);
  if (filters.method) query.set('method', filters.method);
  return query;
}

function withLimit(query: URLSearchParams): URLSearchParams {
  const copy = new URLSearchParams(query);
  copy.set('limit', String(PAGE_SIZE));
  return copy;
}

/** Adds fresh records and keeps the table newest first, within the live-row cap. */
function insertNewest(list: CapturedRequest[], fresh: CapturedRequest[]): CapturedRequest[] {
  if (fresh.length === 0) return list;
  const merged = [...fresh, ...list].sort((a, b) => b.timestamp.localeCompare(a.timestamp));
  return merged.length > MAX_LIVE_ROWS ? merged.slice(0, MAX_LIVE_ROWS) : merged;
}
