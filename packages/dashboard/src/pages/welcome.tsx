import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorText } from '../components/bits.js';
import { api } from '../lib/api.js';
import { useSession } from '../lib/session.js';
import type { SignedIn } from '../lib/types.js';
import { useAction } from '../lib/use-action.js';
import { AuthCard, MIN_PASSWORD_LENGTH } from './sign-in.js';

/**
 * Reads the one-time sign-in link's token from the URL fragment (a fragment never reaches the
 * server or a Referer), then removes it from the address bar so it is not left in history.
 */
function takeLinkToken(): string | undefined {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? undefined;
  if (location.hash !== '') history.replaceState(null, '', location.pathname);
  return token;
}

/** /welcome#token=svl_…: set a password for the account the first start created, and sign in. */
export function WelcomePage(): JSX.Element {
  const session = useSession();
  const [token] = useState(takeLinkToken);
  const action = useAction();

  if (!token) {
    return (
      <AuthCard title="Welcome to svcRouter">
        <p class="error" role="alert">
          This page needs the one-time link that svc-server printed. Run <code>svc-server account link --email E</code> for a new one.
        </p>
      </AuthCard>
    );
  }

  const submit = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    const password = String(new FormData(event.currentTarget as HTMLFormElement).get('password') ?? '');
    await action.run(async () => session.signedIn(await api<SignedIn>('POST', '/auth/link', { token, password })));
  };

  return (
    <AuthCard title="Set your password">
      <p class="muted">Choose a password for this account; you will sign in with it from now on.</p>
      <form onSubmit={(event) => void submit(event)} class="stack">
        <label>
          Password
          <input name="password" type="password" autocomplete="new-password" required minLength={MIN_PASSWORD_LENGTH} />
        </label>
        <ErrorText message={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Set password
        </button>
      </form>
    </AuthCard>
  );
}
