import { STATUS_CODES } from 'node:http';
import { Messages } from '@svcrouter/protocol';
import { httpDate } from './http-date.js';

/** A small page the edge answers with itself (offline, 502, 429…). */
export interface EdgePage {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One of the edge's small HTML pages: a title and a sentence. */
export function page(status: number, title: string, detail: string): EdgePage {
  const body = `<!doctype html>
<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}p{color:#555}</style>
</head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p><p><small>svcRouter</small></p></body></html>
`;
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'no-store',
      'x-svc-error': title,
    },
    body,
  };
}

/** 404: no agent is bound to this hostname (as ngrok answers). */
export function offlinePage(host: string): EdgePage {
  return page(
    404,
    Messages.TUNNEL_OFFLINE,
    `No agent is connected for ${host}. Start one with \`svc http <port>\`, or check the hostname.`,
  );
}

/** 502: the agent is there but could not reach the local service. */
export function unreachablePage(host: string, local: string): EdgePage {
  return page(502, 'Bad Gateway', `The svcRouter agent for ${host} could not reach ${local}. Is your local service running on that port?`);
}

/** 502: the agent or the local service failed before a response started. */
export function upstreamErrorPage(host: string, reason: string): EdgePage {
  return page(502, 'Bad Gateway', `The tunnel for ${host} failed before the response started (${reason}).`);
}

/** 429: the account's monthly transfer quota is used up. */
export function bandwidthPage(): EdgePage {
  return page(
    429,
    Messages.BANDWIDTH_LIMIT,
    "This tunnel's account has used its monthly transfer quota. It resets at the start of next month (UTC).",
  );
}

/** 400: a request the edge cannot route (no Host). */
export function badRequestPage(reason: string): EdgePage {
  return page(400, 'Bad Request', reason);
}

/**
 * What a 405 to CONNECT names in `Allow`, which HTTP requires of every 405. A tunnel passes every
 * other method to its service, whose resources decide; these are the methods clients send.
 */
const TUNNEL_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * 405: a CONNECT request. The edge is a reverse proxy: a tunnel carries requests to its local
 * service and never opens a connection to a host the visitor names.
 */
export function connectRefusedPage(): EdgePage {
  const refused = page(
    405,
    'Method Not Allowed',
    'CONNECT is not supported: a tunnel forwards requests to its service, it does not open connections to other hosts.',
  );
  refused.headers['allow'] = TUNNEL_METHODS;
  return refused;
}

/** 431: an HTTP/2 request head over the edge's limit (HTTP/1.1's is answered by Node's parser). */
export function headTooLargePage(limitBytes: number): EdgePage {
  return page(431, 'Request Header Fields Too Large', `The request head is larger than ${limitBytes / 1024} KiB.`);
}

/** The realm visitors' browsers show in their sign-in prompt. */
export const BASIC_AUTH_REALM = 'svcRouter';

/** The page for a request a tunnel's access rules refused: 401 (credentials), 403 (address), 429 (failed too often), 503 (sign-ins busy). */
export function deniedPage(status: 401 | 403 | 429 | 503): EdgePage {
  if (status === 403) return page(403, 'Access denied', 'Your address is not allowed to reach this tunnel.');
  if (status === 503) {
    const busy = page(503, 'Sign-ins busy', 'This tunnel is checking many sign-ins at once. Try again in a moment.');
    busy.headers['retry-after'] = '1';
    return busy;
  }
  if (status === 429) {
    const limited = page(429, 'Too many failed sign-ins', 'Too many wrong credentials came from your address. Try again in a minute.');
    limited.headers['retry-after'] = '60';
    return limited;
  }
  const unauthorized = page(401, 'Authentication required', 'This tunnel asks for a user name and password.');
  unauthorized.headers['www-authenticate'] = `Basic realm="${BASIC_AUTH_REALM}"`;
  return unauthorized;
}

/** One of the edge's own pages as a whole HTTP/1.1 response that keeps the connection usable. */
export function pageResponse(page: EdgePage, requestMethod: string, keepAlive: boolean): string {
  let text = `HTTP/1.1 ${page.status} ${STATUS_CODES[page.status] ?? 'Error'}\r\n`;
  for (const name in page.headers) text += `${name}: ${page.headers[name]}\r\n`;
  text += `date: ${httpDate()}\r\n`;
  if (!keepAlive) text += 'connection: close\r\n';
  return requestMethod === 'HEAD' ? `${text}\r\n` : `${text}\r\n${page.body}`;
}

/** Serialises a page as a raw HTTP/1.1 response that closes the connection, for sockets taken over by an upgrade. */
export function rawResponse(edgePage: EdgePage): string {
  return pageResponse(edgePage, 'GET', false);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
