import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { api, setCsrfToken } from './api.js';
import type { Account, SessionState, SignedIn } from './types.js';

/** What pages know about the signed-in person, and how they change it. */
export interface SessionApi {
  state: SessionState;
  /** After sign-in, sign-up or a welcome link: the server's answer becomes the session. */
  signedIn(answer: SignedIn): void;
  /** After sign-out or a 401: back to the sign-in page. */
  signedOut(): void;
}

export const SessionContext = createContext<SessionApi | undefined>(undefined);

/** The session of the page; only used below the App's provider. */
export function useSession(): SessionApi {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionContext');
  return session;
}

/** The signed-in account; pages behind sign-in only. */
export function useAccount(): Account {
  const { state } = useSession();
  if (!state.signedIn) throw new Error('useAccount while signed out');
  return state.account;
}

/** Reads the session from the server (the cookie is HttpOnly, so only the server knows it). */
export async function loadSession(): Promise<SessionState> {
  const state = await api<SessionState>('GET', '/auth/session');
  setCsrfToken(state.signedIn ? state.csrfToken : undefined);
  return state;
}
