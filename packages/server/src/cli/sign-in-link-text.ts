import { createSignInLink, LINK_LIFETIME_MS, signInLinkUrl } from '../auth/index.js';
import type { Store } from '../store/index.js';

/** The apex over plain HTTP, as a person types it (no `:80`). */
export function apexHttpUrl(sharedDomain: string, httpPort: number): string {
  return `http://${sharedDomain}${httpPort === 80 ? '' : `:${httpPort}`}`;
}

/** Makes a one-time sign-in link for the account and prints it with how long it works. */
export async function printSignInLink(
  store: Pick<Store, 'signInLinks'>,
  accountId: string,
  apexUrl: string,
  out: NodeJS.WritableStream,
): Promise<void> {
  const token = await createSignInLink(store, accountId);
  out.write(`Open this one-time link to set a password and sign in to the dashboard:\n`);
  out.write(`  ${signInLinkUrl(apexUrl, token)}\n`);
  out.write(`It is valid for ${LINK_LIFETIME_MS / 60_000} minutes and works once.\n`);
}
