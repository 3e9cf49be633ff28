import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { freePort } from '@svcrouter/testkit';
import type { AgentMessage } from '@svcrouter/protocol';
import { openStore, type Account, type Store } from '../../store/index.js';
import { Router } from '../router.js';
import { TcpTunnels } from './tcp-tunnels.js';

// The ports of binds that do not come through: nothing written for a port outside the range,
// and nothing left behind by a bind refused after its port was claimed (the tunnel limit).

type BindRequest = Extract<AgentMessage, { type: 'bind' }>;

describe('TCP tunnels: ports of binds that fail', () => {
  let dir: string;
  let store: Store;
  let tunnels: TcpTunnels;
  let port: number;
  let account: Account;
  let other: Account;
  const bind = (fields: Partial<BindRequest>): BindRequest => ({
    type: 'bind',
    requestId: 1,
    local: 'localhost:22',
    proto: 'tcp',
    ...fields,
  });
  const held = async (p: number): Promise<boolean> => (await store.tcpAddresses.takenPorts(p, p, Date.now())).has(p);
  /** Waits for the store writes queued by `failed`. */
  const settled = (): Promise<void> => tunnels.written();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-tcp-tunnels-'));
    store = await openStore({ dataDir: dir });
    account = await store.accounts.create({ email: 'a@example.com', name: 'A', plan: 'free' });
    other = await store.accounts.create({ email: 'b@example.com', name: 'B', plan: 'free' });
    port = await freePort();
    tunnels = new TcpTunnels({
      store,
      router: new Router(),
      range: { from: port, to: port },
      host: '127.0.0.1',
      sharedDomain: 'localhost',
      nodeId: 'node-t',
      graceMs: 30_000,
      log: pino({ level: 'silent' }),
      observe: () => undefined,
      meter: undefined,
    });
  });
  after(async () => {
    await tunnels.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a port outside the range with the range, and writes nothing for it', async () => {
    await assert.rejects(tunnels.choose(account.id, bind({ remoteAddr: 'localhost:22' })), {
      code: 'TCP_PORT_UNAVAILABLE',
      message: `port 22 is outside this edge's TCP ports ${port}`,
    });
    await assert.rejects(tunnels.choose(account.id, bind({ hostname: 'localhost:23' })), {
      message: `port 23 is outside this edge's TCP ports ${port}`,
    });
    assert.equal((await store.tcpAddresses.takenPorts(1, 65_535, Date.now())).size, 0);
  });

  it('refuses a remoteAddr that is not text instead of binding a random port, and writes nothing', async () => {
    const asked = { ...bind({}), remoteAddr: port } as unknown as BindRequest;
    await assert.rejects(tunnels.choose(account.id, asked), {
      code: 'NAME_INVALID',
      message: `invalid TCP address "${port}": expected host:port or a port`,
    });
    assert.equal((await store.tcpAddresses.takenPorts(1, 65_535, Date.now())).size, 0);
  });

  it('gives up the lease of a bind refused after its port was claimed, so another account gets the port', async () => {
    const { hostname } = await tunnels.choose(account.id, bind({}));
    assert.equal(hostname, `localhost:${port}`);
    assert.equal(await held(port), true);
    tunnels.failed(hostname, account.id);
    await settled();
    assert.equal(await held(port), false);
    // A reconnect asks for it by its previous name; given up the same way.
    await tunnels.choose(account.id, bind({ hostname }));
    tunnels.failed(hostname, account.id);
    await settled();
    assert.equal(await held(port), false);
    // --remote-addr on the account's own lease held for a reconnect: given up too.
    await tunnels.choose(account.id, bind({}));
    await store.tcpAddresses.holdLease(port, account.id, Date.now() + 30_000);
    await tunnels.choose(account.id, bind({ remoteAddr: hostname }));
    tunnels.failed(hostname, account.id);
    await settled();
    assert.equal(await held(port), false);
    const taken = await tunnels.choose(other.id, bind({}));
    assert.equal(taken.hostname, hostname);
    tunnels.failed(hostname, other.id);
    await settled();
  });

  it('binds a --remote-addr only on the account’s reservation or its own lease, and only of this edge', async () => {
    const notYours = (addr: string) => ({
      code: 'NAME_TAKEN',
      message: `${addr} is not a TCP address reserved by this account; reserve one with POST /v1/tcp-addresses`,
    });
    // A free port is no address of the account, named with the host or without.
    for (const addr of [`localhost:${port}`, String(port)])
      await assert.rejects(tunnels.choose(account.id, bind({ remoteAddr: addr })), notYours(addr));
    assert.equal(await held(port), false);
    await assert.rejects(tunnels.choose(account.id, bind({ remoteAddr: `evil.example:${port}` })), {
      code: 'NAME_INVALID',
      message: `evil.example:${port} is not an address of this edge: its TCP addresses are localhost:<port> (or the port alone)`,
    });
    // Another account's lease, live or held for its reconnect: in use.
    const { hostname } = await tunnels.choose(other.id, bind({}));
    await assert.rejects(tunnels.choose(account.id, bind({ remoteAddr: hostname })), {
      message: `${hostname} is in use by another tunnel`,
    });
    await store.tcpAddresses.holdLease(port, other.id, Date.now() + 30_000);
    await assert.rejects(tunnels.choose(account.id, bind({ remoteAddr: hostname })), {
      message: `${hostname} is in use by another tunnel`,
    });
    // Its own lease, while held for it: taken back, by the host:port or the port alone.
    assert.equal((await tunnels.choose(other.id, bind({ remoteAddr: String(port) }))).hostname, hostname);
    // Once the grace has run out it is nobody's address.
    await store.tcpAddresses.holdLease(port, other.id, Date.now() - 1);
    await assert.rejects(tunnels.choose(other.id, bind({ remoteAddr: hostname })), notYours(hostname));
    tunnels.failed(hostname, other.id);
    await settled();
    assert.equal(await held(port), false);
  });

  it('keeps a reservation when the bind on it fails', async () => {
    const reserved = await store.tcpAddresses.reserve(account.id, port, Date.now());
    assert.ok(reserved);
    try {
      const { hostname } = await tunnels.choose(account.id, bind({ remoteAddr: `localhost:${port}` }));
      tunnels.failed(hostname, account.id);
      await settled();
      assert.deepEqual(
        (await store.tcpAddresses.listReserved(account.id)).map((a) => a.port),
        [port],
      );
    } finally {
      await store.tcpAddresses.deleteReserved(account.id, reserved.id);
    }
  });
});
