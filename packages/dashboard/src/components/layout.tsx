import type { ComponentChildren, JSX } from 'preact';
import { NAV } from '../lib/nav.js';
import { Link, usePath } from '../lib/router.js';
import { useAccount } from '../lib/session.js';

/** The signed-in frame: brand, navigation (a row of links that wraps on a phone), the page. */
export function Layout({ children }: { children: ComponentChildren }): JSX.Element {
  const path = usePath();
  const account = useAccount();
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <Link href="/" class="brand" aria-label="svcRouter home">
          svcRouter
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map((page) => (
              <li key={page.path}>
                <Link href={page.path} aria-current={page.path === path ? 'page' : undefined}>
                  {page.title}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who muted" title={account.email}>
          {account.email}
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
