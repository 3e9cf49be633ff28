import type { JSX } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ConnectionBanner } from './components/connection-banner.js';
import { Layout } from './components/layout.js';
import { ErrorText, Loading } from './components/bits.js';
import { ApiError, errorMessage, setCsrfToken, setUnauthorizedHandler } from './lib/api.js';
import { connection } from './lib/connection.js';
import { navigate, usePath } from './lib/router.js';
import { SessionContext, loadSession, type SessionApi } from './lib/session.js';
import type { SessionState } from './lib/types.js';
import { AccountPage } from './pages/account.js';
import { DomainsPage } from './pages/domains.js';
import { OverviewPage } from './pages/overview.js';
import { SignInPage, SignUpPage } from './pages/sign-in.js';
import { TokensPage } from './pages/tokens.js';
import { WebhooksPage } from './pages/webhooks.js';
import { TrafficPage } from './pages/traffic.js';
import { TunnelsPage } from './pages/tunnels.js';
import { UsagePage } from './pages/usage.js';
import { WelcomePage } from './pages/welcome.js';

/** Pages behind sign-in, by path (lib/nav.ts lists them in navigation order). */
const PAGES: Record<string, () => JSX.Element> = {
  '/': () => <OverviewPage />,
  '/tunnels': () => <TunnelsPage />,
  '/traffic': () => <TrafficPage />,
  '/domains': () => <DomainsPage />,
  '/tokens': () => <TokensPage />,
  '/webhooks': () => <WebhooksPage />,
  '/usage': () => <UsagePage />,
  '/account': () => <AccountPage />,
};

const PUBLIC_PATHS = new Set(['/signin', '/signup', '/welcome']);

/** The dashboard: reads the session once, then routes between the public and signed-in pages. */
export function App(): JSX.Element {
  const path = usePath();
  const [state, setState] = useState<SessionState | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);

  const refresh = useCallback(() => {
    loadSession().then(
      (loaded) => {
        setState(loaded);
        setFailure(undefined);
      },
      // A lost connection is retried on its own (below); any other answer is shown as is.
      (caught: unknown) => setFailure(caught instanceof ApiError && caught.status === 0 ? undefined : errorMessage(caught)),
    );
  }, []);
  useEffect(() => {
    refresh();
    // A first load that failed (server down) is retried once the server answers again.
    return connection.subscribe((online) => {
      if (online) refresh();
    });
  }, [refresh]);

  const session = useMemo<SessionApi | undefined>(() => {
    if (!state) return undefined;
    return {
      state,
      signedIn: (answer) => {
        setCsrfToken(answer.csrfToken);
        setState({ signedIn: true, signup: state.signup, account: answer.account, csrfToken: answer.csrfToken, hasPassword: true });
        navigate('/');
      },
      signedOut: () => {
        setCsrfToken(undefined);
        setState({ signedIn: false, signup: state.signup });
        navigate('/signin');
      },
    };
  }, [state]);

  useEffect(() => setUnauthorizedHandler(() => session?.signedOut()), [session]);

  // Redirects as effects, so the address bar and the page always agree.
  const isPublic = PUBLIC_PATHS.has(path);
  useEffect(() => {
    if (!state) return;
    if (!state.signedIn && !isPublic) navigate('/signin', { replace: true });
    if (state.signedIn && (path === '/signin' || path === '/signup')) navigate('/', { replace: true });
  }, [state, path, isPublic]);

  return (
    <>
      <ConnectionBanner />
      {!session ? (
        <main class="centered">
          {failure ? (
            <div class="card auth">
              <ErrorText message={failure} />
              <button type="button" onClick={refresh}>
                Try again
              </button>
            </div>
          ) : (
            <Loading />
          )}
        </main>
      ) : (
        <SessionContext.Provider value={session}>{route(path, session.state)}</SessionContext.Provider>
      )}
    </>
  );
}

function route(path: string, state: SessionState): JSX.Element {
  if (path === '/welcome') return <WelcomePage />;
  if (!state.signedIn) return path === '/signup' ? <SignUpPage /> : <SignInPage />;
  const page = PAGES[path];
  return (
    <Layout>
      {page ? (
        page()
      ) : (
        <section>
          <h1>Page not found</h1>
          <p>There is no page at {path}.</p>
        </section>
      )}
    </Layout>
  );
}
