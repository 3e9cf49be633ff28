import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Inspector } from '@svcrouter/sdk';
import { handleApi } from './api.js';
import { apiError, type Send } from './http-json.js';
import { inspectAddrProblem, parseInspectAddr, refusal, SECURITY_HEADERS } from './guard.js';
import { readUiFile } from './ui-files.js';
import type { TunnelControlSlot } from './tunnels-api.js';

export { parseInspectAddr };

/** Ports tried from the asked one on, one after the other, before any free port. */
const PORT_ATTEMPTS = 20;

/** The web UI's paths and files (ui-files.ts finds them in the package or the executable). */
const UI_FILES: Readonly<Record<string, { file: string; type: string }>> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

/** A running inspector. */
export interface InspectorServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Serves the inspector's web UI and JSON API for `inspector` on a loopback address, taking the
 * next free port when the asked one is in use. Rejects for an address that is not loopback:
 * captured traffic holds cookies and tokens, and must never be reachable from the network.
 */
export async function startInspectorServer(inspector: Inspector, addr: string, tunnels?: TunnelControlSlot): Promise<InspectorServer> {
  const problem = inspectAddrProblem(addr);
  if (problem !== undefined) throw new Error(problem);
  const parsed = parseInspectAddr(addr)!;
  let port = 0;
  const server = http.createServer((request, response) => {
    void serve(inspector, parsed.host, port, request, response, tunnels).catch(() => {
      if (!response.headersSent) send(response, 500, apiError('internal', 'the inspector failed on this request'));
      else response.destroy();
    });
  });
  port = await listenFrom(server, parsed.host, parsed.port);
  const shown = parsed.host.includes(':') ? `[${parsed.host}]` : parsed.host;
  return {
    url: `http://${shown}:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function serve(
  inspector: Inspector,
  host: string,
  port: number,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  tunnels: TunnelControlSlot | undefined,
): Promise<void> {
  const refused = refusal(request, port, host);
  if (refused) return send(response, 403, apiError('forbidden', refused));
  const path = new URL(request.url ?? '/', 'http://inspector').pathname;
  if (path.startsWith('/api/')) return handleApi(inspector, request, response, send, tunnels);
  const asset = UI_FILES[path];
  if (!asset || (request.method !== 'GET' && request.method !== 'HEAD')) return send(response, 404, apiError('not_found', 'not found'));
  const body = await readUiFile(asset.file);
  response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': asset.type, 'content-length': body.length });
  response.end(request.method === 'HEAD' ? undefined : body);
}

const send: Send = (response, status, body) => {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
};

/**
 * Listens on `port`, or the next free one of PORT_ATTEMPTS, else on any free port: many agents
 * on one machine (or a busy default port) must never stop a tunnel from starting. Port 0 takes any.
 */
async function listenFrom(server: http.Server, host: string, port: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const candidate = port === 0 || attempt >= PORT_ATTEMPTS || port + attempt > 65535 ? 0 : port + attempt;
    try {
      // Both listeners go whichever fires: a busy port must not leave a 'listening' one behind.
      await new Promise<void>((resolve, reject) => {
        const listening = (): void => {
          server.off('error', failed);
          resolve();
        };
        const failed = (error: Error): void => {
          server.off('listening', listening);
          reject(error);
        };
        server.once('error', failed);
        server.once('listening', listening);
        server.listen(candidate, host);
      });
      return (server.address() as AddressInfo).port;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || candidate === 0) throw error;
    }
  }
}
