import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { connection } from '../lib/connection.js';

/** "reconnecting…" while the server does not answer (a restart); gone once it does. */
export function ConnectionBanner(): JSX.Element {
  const [online, setOnline] = useState(connection.online);
  useEffect(() => connection.subscribe(setOnline), []);
  return (
    <div class={online ? 'banner hidden' : 'banner'} role="status" aria-live="polite">
      {online ? '' : 'The server is not answering: reconnecting…'}
    </div>
  );
}
