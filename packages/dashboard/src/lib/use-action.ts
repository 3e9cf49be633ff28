import { useState } from 'preact/hooks';
import { errorMessage } from './api.js';

/** A button's or form's work in flight: whether it runs, and the message of its last failure. */
export interface Action {
  busy: boolean;
  error: string | undefined;
  /** Runs `task`; resolves true when it succeeded, false when its error is now shown. */
  run(task: () => Promise<void>): Promise<boolean>;
}

/** One action at a time per form; the API's message of a failure is kept for display. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = async (task: () => Promise<void>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await task();
      return true;
    } catch (caught) {
      setError(errorMessage(caught));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
