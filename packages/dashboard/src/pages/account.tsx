import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorText, PageHeader } from '../components/bits.js';
import { api } from '../lib/api.js';
import { useAction } from '../lib/use-action.js';
import { useAccount, useSession } from '../lib/session.js';
import { MIN_PASSWORD_LENGTH } from './sign-in.js';

/** Who is signed in, a password change, and Sign out. */
export function AccountPage(): JSX.Element {
  const account = useAccount();
  const session = useSession();
  const signOutAction = useAction();
  const signOut = (): Promise<boolean> =>
    signOutAction.run(async () => {
      await api('POST', '/auth/signout');
      session.signedOut();
    });
  return (
    <section>
      <PageHeader title="Account" />
      <div class="grid two">
        <article class="card">
          <dl class="fields">
            <dt>Email</dt>
            <dd>{account.email}</dd>
            <dt>Name</dt>
            <dd>{account.name || <span class="muted">(none)</span>}</dd>
            <dt>Plan</dt>
            <dd class="plan">{account.plan}</dd>
          </dl>
          <ErrorText message={signOutAction.error} />
          <button type="button" onClick={() => void signOut()} disabled={signOutAction.busy}>
            Sign out
          </button>
        </article>
        <ChangePassword />
      </div>
    </section>
  );
}

function ChangePassword(): JSX.Element {
  const { state } = useSession();
  const hasPassword = state.signedIn && state.hasPassword;
  const action = useAction();
  const [done, setDone] = useState(false);
  const submit = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const fields = new FormData(form);
    const body: Record<string, string> = { newPassword: String(fields.get('newPassword') ?? '') };
    if (hasPassword) body.currentPassword = String(fields.get('currentPassword') ?? '');
    setDone(false);
    await action.run(async () => {
      await api('POST', '/v1/me/password', body);
      form.reset();
      setDone(true);
    });
  };
  return (
    <form class="card stack" onSubmit={(event) => void submit(event)}>
      <h2>Change password</h2>
      {hasPassword && (
        <label>
          Current password
          <input name="currentPassword" type="password" autocomplete="current-password" required />
        </label>
      )}
      <label>
        New password
        <input name="newPassword" type="password" autocomplete="new-password" required minLength={MIN_PASSWORD_LENGTH} />
      </label>
      <ErrorText message={action.error} />
      {done && (
        <p class="ok" role="status">
          Password changed. Other devices signed in to this account were signed out.
        </p>
      )}
      <button type="submit" disabled={action.busy}>
        Change password
      </button>
    </form>
  );
}
