import { defineConfig } from 'vite';

// The dashboard is plain static assets served by svc-server at the apex. Its Content-Security-
// Policy allows only same-origin scripts and styles, so the build must not inline either.
export default defineConfig({
  // Preact's automatic JSX runtime; no Babel preset needed.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
  server: {
    // `npm run dev -w @svcrouter/dashboard` beside `npm start`: the API stays on svc-server.
    proxy: {
      '/v1': 'http://localhost:8080',
      '/auth': 'http://localhost:8080',
    },
  },
});
