import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

/** Copies `text` to the clipboard and says so; `what` names it for screen readers ("Copy TXT value"). */
export function CopyButton({ text, what }: { text: string; what: string }): JSX.Element {
  const [done, setDone] = useState<'copied' | 'failed' | undefined>(undefined);
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(text);
      setDone('copied');
    } catch {
      setDone('failed');
    }
  };
  return (
    <span class="copy">
      <button type="button" class="small" aria-label={`Copy ${what}`} onClick={() => void copy()}>
        Copy
      </button>
      <span role="status" class="muted">
        {done === 'copied' ? 'Copied' : done === 'failed' ? 'Copy failed: select the text instead' : ''}
      </span>
    </span>
  );
}
