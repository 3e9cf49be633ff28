import assert from 'node:assert/strict';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import type { TestServer } from './index.js';

// Steps the dashboard's browser tests share. Names are the ones a person reads on screen
// (labels, button and link names), so the tests also check that those names exist.

/** Name of the session cookie (AUTH-CONTRACT: host-only, HttpOnly). */
export const SESSION_COOKIE = 'svc_session';

/** Fills the sign-up form and waits for the Overview. */
export async function signUp(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/signup');
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign up', exact: true }).click();
  await heading(page, 'Overview').waitFor();
}

/** Fills the sign-in form (the caller waits for the outcome). */
export async function fillSignIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/signin');
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** The page's main heading. */
export function heading(page: Page, name: string): Locator {
  return page.getByRole('heading', { level: 1, name, exact: true });
}

/** Follows a link of the main navigation (no reload: the client routes it) and waits for the page. */
export async function openPage(page: Page, title: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: title, exact: true }).click();
  await heading(page, title).waitFor();
}

/** Marks the current document, so a later check can tell whether the page was reloaded since. */
export async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => {
    (globalThis as Record<string, unknown>).svcTestMark = true;
  });
}

/** Asserts the document marked earlier is still the one shown (no reload happened). */
export async function assertNotReloaded(page: Page): Promise<void> {
  assert.equal(await page.evaluate(() => (globalThis as Record<string, unknown>).svcTestMark === true), true, 'the page was reloaded');
}

/** The session cookie of the context (the browser's cookie jar for the apex). */
export async function sessionCookie(context: BrowserContext, server: Pick<TestServer, 'url'>): Promise<string> {
  const cookie = (await context.cookies(server.url)).find((c) => c.name === SESSION_COOKIE);
  assert.ok(cookie, 'no session cookie after sign-in');
  return cookie.value;
}

/** A JSON body as these tests read it: each route has its own shape, and the tests index into it freely. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type JsonBody = any;

/** GET on the API with the context's cookies (as the dashboard does): status and JSON. */
export async function apiGet(
  context: BrowserContext,
  server: Pick<TestServer, 'url'>,
  path: string,
): Promise<{ status: number; body: JsonBody }> {
  const res = await context.request.get(`${server.url}${path}`);
  return { status: res.status(), body: await res.json().catch(() => undefined) };
}

/** What the page's clipboard holds (the context needs the clipboard-read permission). */
export function readClipboard(page: Page): Promise<string> {
  return page.evaluate(() =>
    (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText(),
  );
}

/** The table row that contains `text`. */
export function rowWith(page: Page, text: string): Locator {
  return page.getByRole('row').filter({ hasText: text });
}

/**
 * Collects what shows the page broken: uncaught exceptions, and Content-Security-Policy
 * violations (Chromium reports them on the console). Failed API answers (a 401 on purpose)
 * also reach the console and are not collected.
 */
export function watchPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) errors.push(`csp: ${message.text()}`);
  });
  return errors;
}

/** Creates an agent token on the Tokens page and returns its secret as shown once. */
export async function createTokenInUi(page: Page, description: string): Promise<string> {
  await openPage(page, 'Tokens');
  await page.getByLabel('Description', { exact: true }).fill(description);
  await page.getByRole('button', { name: 'Create token', exact: true }).click();
  const secret = page.getByTestId('new-token');
  await secret.waitFor();
  return (await secret.textContent())?.trim() ?? '';
}

/** The CSRF token of the context's session, as the dashboard reads it. */
export async function csrfToken(context: BrowserContext, server: Pick<TestServer, 'url'>): Promise<string> {
  const session = await apiGet(context, server, '/auth/session');
  assert.equal(session.body?.signedIn, true);
  return session.body.csrfToken as string;
}

/** What each list page says before the account has anything on it. */
export const EMPTY_STATES: ReadonlyArray<readonly [page: string, text: string]> = [
  ['Tunnels', 'No tunnels yet: run svc http 3000'],
  ['Traffic', 'No requests yet'],
  ['Domains', 'No custom domains yet'],
  ['Tokens', 'No tokens yet'],
];

/** Visits every list page and waits for its empty state; `onEach` runs on each (screenshots). */
export async function expectEmptyStates(page: Page, onEach?: (title: string) => Promise<void>): Promise<void> {
  for (const [title, text] of EMPTY_STATES) {
    await openPage(page, title);
    await page.getByText(text).waitFor();
    await onEach?.(title);
  }
}
