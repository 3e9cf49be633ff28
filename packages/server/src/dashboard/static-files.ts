import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import path from 'node:path';

/** A request on either listener (HTTP/1.1 or HTTP/2). */
type Request = IncomingMessage | Http2ServerRequest;
/** A response on either listener. */
type Response = ServerResponse | Http2ServerResponse;

/** Answers a dashboard request; true when the path is the dashboard's (the answer is then on its way). */
export type DashboardHandler = (req: Request, res: Response, pathname: string) => boolean;

/**
 * The dashboard's Content-Security-Policy: only same-origin scripts, styles and connections, no
 * inline code, no `eval`, never framed. Vite's build emits no inline script or style.
 */
export const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Headers on every dashboard response. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': DASHBOARD_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
};

/** Hashed build output: the name changes whenever the content does, so it may be kept for a year. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';
/** The page itself is revalidated on every load, so a new build is picked up at once. */
export const PAGE_CACHE_CONTROL = 'no-cache';

/** Apex paths that belong to the API and operations, never to the dashboard. */
const RESERVED = [/^\/v1(\/|$)/, /^\/auth(\/|$)/, /^\/_svc(\/|$)/, /^\/(healthz|readyz|metrics)$/];

/** What an asset's name may be: Vite writes flat, hashed names under assets/. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const NOT_BUILT_PAGE =
  'The svcRouter dashboard is not built.\n\n' +
  'Build it with `npm run build` (or `npm start`, which builds first), then reload this page.\n' +
  'The REST API works without it: see /v1/openapi.json.\n';

/**
 * Serves the built dashboard from `distDir` for apex GET/HEAD paths the API does not own:
 * `/assets/<name>` as immutable hashed files (404 JSON when missing), any other path as
 * index.html with `no-cache` (the client routes it). Files are read per request, so a rebuild
 * is served without a restart. Names are matched against a strict pattern, never joined raw,
 * so no path can leave `distDir`.
 */
export function createDashboardHandler(distDir: string): DashboardHandler {
  const assetsDir = path.join(distDir, 'assets');
  const indexFile = path.join(distDir, 'index.html');
  return (req, res, pathname) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (RESERVED.some((pattern) => pattern.test(pathname))) return false;
    const answer = pathname.startsWith('/assets/') ? serveAsset(res, assetsDir, pathname) : servePage(res, indexFile);
    // An unreadable build (permissions, a disk error) is the operator's to fix; say so plainly.
    answer.catch(() => send(res, 500, 'text/plain; charset=utf-8', 'no-store', 'The dashboard files could not be read.\n'));
    return true;
  };
}

async function serveAsset(res: Response, assetsDir: string, pathname: string): Promise<void> {
  const name = safeDecode(pathname.slice('/assets/'.length));
  const body = name !== undefined && ASSET_NAME.test(name) ? await readIfFile(path.join(assetsDir, name)) : undefined;
  if (!body || name === undefined) {
    send(
      res,
      404,
      'application/json; charset=utf-8',
      'no-store',
      JSON.stringify({ error: 'not_found', message: `no dashboard file at ${pathname}` }),
    );
    return;
  }
  send(res, 200, CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream', ASSET_CACHE_CONTROL, body);
}

async function servePage(res: Response, indexFile: string): Promise<void> {
  const body = await readIfFile(indexFile);
  if (!body) {
    send(res, 503, 'text/plain; charset=utf-8', 'no-store', NOT_BUILT_PAGE);
    return;
  }
  send(res, 200, 'text/html; charset=utf-8', PAGE_CACHE_CONTROL, body);
}

/** The file's bytes, or undefined when it is missing or not a regular file. */
async function readIfFile(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function send(res: Response, status: number, contentType: string, cacheControl: string, body: string | Buffer): void {
  if (res.headersSent || res.destroyed) return;
  (res as ServerResponse).writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': contentType,
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': cacheControl,
  });
  res.end(body);
}
