import { promises as dns } from 'node:dns';

/** Per-attempt timeout of a query to one server; callers still set their own overall deadline. */
export const DNS_ATTEMPT_TIMEOUT_MS = 2000;

/**
 * A resolver that asks exactly `servers` (SVC_DNS_SERVERS: `ip`, `ip:port`,
 * `[ipv6]:port`). Create one per verification: a resolver is cheap, and a fresh
 * one cannot answer from anything an earlier lookup left behind.
 */
export function createDnsResolver(servers: readonly string[], attemptTimeoutMs = DNS_ATTEMPT_TIMEOUT_MS): dns.Resolver {
  const resolver = new dns.Resolver({ timeout: attemptTimeoutMs, tries: 2 });
  resolver.setServers([...servers]);
  return resolver;
}

/** Outcome of one lookup with a deadline: answers, none (NXDOMAIN/NODATA), a timeout, or another DNS error. */
export type LookupResult<T> = { kind: 'found'; records: T[] } | { kind: 'none' } | { kind: 'timeout' } | { kind: 'error'; code: string };

const NONE_CODES = new Set(['ENODATA', 'ENOTFOUND']);

/** Runs one query, mapping errors to values; settles by `deadline` (epoch ms) even if the resolver has not. */
export async function lookupWithDeadline<T>(query: () => Promise<T[]>, deadline: number): Promise<LookupResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<LookupResult<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), Math.max(0, deadline - Date.now()));
  });
  const answer = query().then(
    (records): LookupResult<T> => (records.length === 0 ? { kind: 'none' } : { kind: 'found', records }),
    (err: unknown): LookupResult<T> => {
      const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : 'EUNKNOWN';
      if (NONE_CODES.has(code)) return { kind: 'none' };
      return code === 'ETIMEOUT' ? { kind: 'timeout' } : { kind: 'error', code };
    },
  );
  try {
    // The losing query is left to finish on its own: cancel() would abort every
    // query of a resolver another caller may share.
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
