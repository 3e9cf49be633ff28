/** The signed-in pages in navigation order; the titles are the links' names. */
export const NAV: ReadonlyArray<{ path: string; title: string }> = [
  { path: '/', title: 'Overview' },
  { path: '/tunnels', title: 'Tunnels' },
  { path: '/traffic', title: 'Traffic' },
  { path: '/domains', title: 'Domains' },
  { path: '/tokens', title: 'Tokens' },
  { path: '/webhooks', title: 'Webhooks' },
  { path: '/usage', title: 'Usage' },
  { path: '/account', title: 'Account' },
];
