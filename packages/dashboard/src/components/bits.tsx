import type { ComponentChildren, JSX } from 'preact';

/** An API error's message, announced to screen readers; nothing when there is none. */
export function ErrorText({ message }: { message: string | undefined }): JSX.Element | null {
  if (!message) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

/** What a page says when it has nothing to show yet, and what to do about it. */
export function EmptyState({ children }: { children: ComponentChildren }): JSX.Element {
  return <div class="empty">{children}</div>;
}

/** A page's title and optional actions on the same line. */
export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }): JSX.Element {
  return (
    <header class="page-header">
      <h1>{title}</h1>
      {children}
    </header>
  );
}

/** "Loading…" while the first answer is on its way. */
export function Loading(): JSX.Element {
  return (
    <p class="muted" role="status">
      Loading…
    </p>
  );
}

/**
 * A table's column headings; `withActions` adds a last, visually empty column for buttons.
 * Explicit roles keep the table a table for screen readers where a phone layout restyles it
 * as cards (display: block drops the implicit table semantics in browsers).
 */
export function TableHead({ columns, withActions }: { columns: string[]; withActions?: boolean }): JSX.Element {
  return (
    <thead role="rowgroup">
      <tr role="row">
        {columns.map((column) => (
          <th key={column} scope="col" role="columnheader">
            {column}
          </th>
        ))}
        {withActions && (
          <th scope="col" role="columnheader">
            <span class="sr-only">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}
