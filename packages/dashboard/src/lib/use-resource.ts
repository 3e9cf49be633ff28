import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorMessage } from './api.js';
import { connection } from './connection.js';

/** Data loaded from the API: the latest value, the latest error's message, and a way to reload. */
export interface Resource<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload(): Promise<void>;
}

/**
 * Loads `load()` on mount and whenever `deps` change, again every `pollMs` when given, and
 * again when the server comes back after a restart. A failed reload keeps the last data and
 * shows the error beside it, so a blip never blanks the page.
 */
export function useResource<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const loader = useRef(load);
  loader.current = load;

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const value = await loader.current();
      if (mine !== generation.current) return;
      setData(value);
      setError(undefined);
    } catch (caught) {
      // A lost connection is announced once, by the banner, and retried when the server is back.
      const lost = caught instanceof ApiError && caught.status === 0;
      if (mine === generation.current && !lost) setError(errorMessage(caught));
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    setLoading(true);
    void reload();
    const timer = pollMs === undefined ? undefined : setInterval(() => void reload(), pollMs);
    const unsubscribe = connection.subscribe((online) => {
      if (online) void reload();
    });
    return () => {
      generation.current++;
      if (timer) clearInterval(timer);
      unsubscribe();
    };
    // Only the caller's `deps` start a new load: `reload` never changes and reads `load` through a ref.
  }, deps);

  return { data, error, loading, reload };
}
