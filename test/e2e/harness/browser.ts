import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { findTool, requireTools } from '@svcrouter/testkit/tools';
import { REPO_ROOT } from './processes.js';

/** Debian's Chromium; Playwright's own browser download cannot work on CI machines without internet. */
export const CHROMIUM = 'chromium';

/** Flags for a quiet headless Chromium in a container: no sandbox (no user namespaces), no GPU, no calls home. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Where screenshots go: looked at by people, never committed (.gitignore). */
export const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'dashboard');

/** Viewports every page is captured at: a laptop and a small phone. */
export const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 375, height: 740 } } as const;

/**
 * True when Chromium is installed. Otherwise registers one test named `suite` that is skipped
 * with a visible notice, or fails under CI=true (CI must run the browser suites).
 */
export function requireChromium(suite: string, extraTools: readonly string[] = [], extraPackages = ''): boolean {
  return requireTools(suite, [CHROMIUM, ...extraTools], [CHROMIUM, extraPackages].filter(Boolean).join(' '));
}

/** Launches headless Chromium (call only after requireChromium said yes), with `extraArgs` after the usual flags. */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  const executablePath = findTool(CHROMIUM);
  if (!executablePath) throw new Error('chromium not found (apt-get install -y chromium)');
  return chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

/** Chromium that resolves every name under `domain` (a shared tunnel domain, not in DNS) to loopback, as the harness's visitor does. */
export function launchChromiumFor(domain: string): Promise<Browser> {
  return launchChromium([`--host-resolver-rules=MAP *.${domain} 127.0.0.1`]);
}

/**
 * Saves `name`-desktop.png and `name`-phone.png of the whole page, then puts the desktop
 * viewport back. The caller waits for what the page should show before calling.
 */
export async function captureViewports(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: path.join(ARTIFACTS_DIR, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}
