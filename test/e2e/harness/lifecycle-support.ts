// Helpers shared by the lifecycle and token e2e tests: an origin that holds requests open,
// a port with nothing listening, token revocation through the store, and tunnel lookups.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hashToken } from '@svcrouter/server/auth';
import { openStore } from '@svcrouter/server/store';
import { api, type TestServer } from './index.js';

/** An origin whose `/hold` requests get no answer until the origin closes. */
export interface HoldingOrigin {
  port: number;
  /** Resolves when the next `/hold` request reaches the origin. */
  nextHold(): Promise<void>;
  close(): Promise<void>;
}

/** Starts an origin on 127.0.0.1:0 that answers `/` and holds `/hold` open. */
export async function startHoldingOrigin(): Promise<HoldingOrigin> {
  let arrived: (() => void) | undefined;
  const server = http.createServer((req, res) => {
    if (req.url === '/hold') {
      arrived?.();
      return;
    }
    res.end('hello from holding origin');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    nextHold: () => new Promise<void>((resolve) => (arrived = resolve)),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on (bound once by us, then released). */
export async function unusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Revokes one agent token directly in the server's SQLite store (there is no key API yet). */
export async function revokeToken(dataDir: string, token: string): Promise<void> {
  const store = await openStore({ dataDir });
  try {
    const key = await store.keys.byTokenHash(hashToken(token));
    assert.ok(key, 'token not found in the store');
    assert.equal(await store.keys.revoke(key.accountId, key.id), true);
  } finally {
    await store.close();
  }
}

/** A tunnel as GET /v1/tunnels lists it. */
export interface TunnelView {
  id: string;
  status: string;
  url: string;
  host: string;
}

/** GET /v1/tunnels for `token`; fails the test on a non-200 answer. */
export async function listTunnels(server: Pick<TestServer, 'url'>, token: string): Promise<TunnelView[]> {
  const result = await api(server, 'GET', '/v1/tunnels', { token });
  assert.equal(result.status, 200, result.text);
  return (result.body as { tunnels: TunnelView[] }).tunnels;
}

/** The listed tunnel serving `host`, or undefined. */
export async function tunnelByHost(server: Pick<TestServer, 'url'>, token: string, host: string): Promise<TunnelView | undefined> {
  return (await listTunnels(server, token)).find((tunnel) => tunnel.host === host);
}
