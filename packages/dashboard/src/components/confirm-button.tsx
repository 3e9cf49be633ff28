import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorText } from './bits.js';
import { useAction } from '../lib/use-action.js';

interface ConfirmButtonProps {
  /** The action's name: the button's text and the confirming button's text alike. */
  label: string;
  /** What the dialog asks, e.g. "Stop the tunnel to https://…?" */
  question: ComponentChildren;
  /** Runs on confirmation; a rejection is shown inside the dialog as its message. */
  onConfirm(): Promise<void>;
}

/**
 * A destructive action behind a confirmation: a native modal `<dialog>` (focus moves into it,
 * Escape cancels, the page behind is inert) whose confirming button repeats the action's name.
 */
export function ConfirmButton({ label, question, onConfirm }: ConfirmButtonProps): JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const action = useAction();

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);

  const confirm = async (): Promise<void> => {
    if (await action.run(onConfirm)) setOpen(false);
  };

  return (
    <>
      <button type="button" class="danger" onClick={() => setOpen(true)}>
        {label}
      </button>
      <dialog ref={dialog} class="confirm" onClose={() => setOpen(false)} aria-label={`${label}?`}>
        <p>{question}</p>
        <ErrorText message={action.error} />
        <div class="actions">
          <button type="button" onClick={() => setOpen(false)}>
            Cancel
          </button>
          <button type="button" class="danger" disabled={action.busy} onClick={() => void confirm()}>
            {label}
          </button>
        </div>
      </dialog>
    </>
  );
}
