import { Fragment, type JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { formatBytes, formatTime } from '../lib/format.js';
import type { CapturedRequest } from '../lib/types.js';

/** Every field of one captured request, in a modal dialog (Escape or Close returns to the table). */
export function RequestDetails({ record, onClose }: { record: CapturedRequest; onClose: () => void }): JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (dialog.current && !dialog.current.open) dialog.current.showModal();
  }, []);
  const fields: Array<[string, string]> = [
    ['Time', formatTime(record.timestamp)],
    ['Method', record.method],
    ['Host', record.host],
    ['Path', record.path],
    ['Status', record.status === 0 ? '0 (the visitor left before a response)' : String(record.status)],
    ['Duration', `${record.durationMs} ms`],
    ['Bytes', `${record.bytes} (${formatBytes(record.bytes)})`],
    ['IP', record.ip],
    ['User agent', record.userAgent || '(none)'],
    ['Proto', record.proto],
    ['Tunnel', record.tunnelId ?? '(no tunnel record)'],
    ['Target', record.target ?? '(the tunnel has no routes)'],
    ['Request id', record.id],
  ];
  return (
    <dialog ref={dialog} class="details" aria-label="Request details" onClose={onClose}>
      <h2>
        {record.method} {record.path}
      </h2>
      <dl class="fields">
        {fields.map(([name, value]) => (
          <Fragment key={name}>
            <dt>{name}</dt>
            <dd>
              <code>{value}</code>
            </dd>
          </Fragment>
        ))}
      </dl>
      <div class="actions">
        <button type="button" onClick={onClose} autofocus>
          Close
        </button>
      </div>
    </dialog>
  );
}
