import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

// Client-side routes on the History API: the server answers index.html for every page path,
// so a reload or a shared link lands on the same page.

type Listener = () => void;
const listeners = new Set<Listener>();

/** Goes to `path` without a reload. */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (path === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  for (const listener of listeners) listener();
}

/** The current path; re-renders on navigation and on Back/Forward. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = (): void => setPath(location.pathname);
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string;
  'aria-label'?: string;
  'aria-current'?: 'page';
}

/** An in-app link: a real `<a href>` (keyboard, middle-click), routed without a reload. */
export function Link({ href, children, ...rest }: LinkProps): JSX.Element {
  const onClick = (event: MouseEvent): void => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
