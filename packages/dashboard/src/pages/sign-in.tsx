import type { ComponentChildren, JSX } from 'preact';
import { ErrorText } from '../components/bits.js';
import { api } from '../lib/api.js';
import { Link } from '../lib/router.js';
import { useSession } from '../lib/session.js';
import type { SignedIn } from '../lib/types.js';
import { useAction } from '../lib/use-action.js';

/** Shortest password the server accepts; checked there too, this only saves a round trip. */
export const MIN_PASSWORD_LENGTH = 8;

/** Sign in with email and password. */
export function SignInPage(): JSX.Element {
  const { state } = useSession();
  return (
    <AuthCard title="Sign in to svcRouter">
      <CredentialsForm endpoint="/auth/signin" action="Sign in" passwordAutocomplete="current-password" />
      {state.signup === 'open' && (
        <p class="muted">
          No account yet? <Link href="/signup">Create one</Link>
        </p>
      )}
    </AuthCard>
  );
}

/** Create an account; the server may have sign-up closed, which the page says up front. */
export function SignUpPage(): JSX.Element {
  const { state } = useSession();
  return (
    <AuthCard title="Create your svcRouter account">
      {state.signup === 'closed' ? (
        <p class="error" role="alert">
          Sign-up is closed on this server; ask its operator for an account.
        </p>
      ) : (
        <CredentialsForm endpoint="/auth/signup" action="Sign up" passwordAutocomplete="new-password" withName />
      )}
      <p class="muted">
        Already have an account? <Link href="/signin">Sign in</Link>
      </p>
    </AuthCard>
  );
}

/** The centred card of the signed-out pages. */
export function AuthCard({ title, children }: { title: string; children: ComponentChildren }): JSX.Element {
  return (
    <main class="centered">
      <section class="card auth">
        <p class="brand">svcRouter</p>
        <h1>{title}</h1>
        {children}
      </section>
    </main>
  );
}

interface CredentialsFormProps {
  endpoint: '/auth/signin' | '/auth/signup';
  action: 'Sign in' | 'Sign up';
  passwordAutocomplete: string;
  withName?: boolean;
}

function CredentialsForm({ endpoint, action, passwordAutocomplete, withName }: CredentialsFormProps): JSX.Element {
  const session = useSession();
  const request = useAction();

  const submit = async (event: SubmitEvent): Promise<void> => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const body: Record<string, string> = { email: String(form.get('email') ?? '').trim(), password: String(form.get('password') ?? '') };
    const name = String(form.get('name') ?? '').trim();
    if (withName && name !== '') body.name = name;
    await request.run(async () => session.signedIn(await api<SignedIn>('POST', endpoint, body)));
  };

  return (
    <form onSubmit={(event) => void submit(event)} class="stack">
      <label>
        Email
        <input name="email" type="email" autocomplete="email" required />
      </label>
      {withName && (
        <label>
          Name <span class="muted">(optional)</span>
          <input name="name" type="text" autocomplete="name" maxLength={200} />
        </label>
      )}
      <label>
        Password
        <input
          name="password"
          type="password"
          autocomplete={passwordAutocomplete}
          required
          minLength={action === 'Sign up' ? MIN_PASSWORD_LENGTH : undefined}
        />
      </label>
      <ErrorText message={request.error} />
      <button type="submit" class="primary" disabled={request.busy}>
        {action}
      </button>
    </form>
  );
}
