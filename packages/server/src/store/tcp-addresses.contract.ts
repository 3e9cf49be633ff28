import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Account, Store } from './store.js';

// The tcp_addresses part of the Store contract: every claim is one statement on the port's
// primary key, so of racing claims exactly one wins, on either engine. Called from inside
// runStoreContract, which owns the store.

/** Registers the TCP address contract tests; `store()` is read inside each test. */
export function runTcpAddressContract(store: () => Store, newAccount: () => Promise<Account>): void {
  // Each test uses its own ports: the store is shared by the whole contract run.
  let nextPort = 40_000;
  const port = (): number => nextPort++;

  describe('tcp addresses', () => {
    it('gives a free port to exactly one of many racing claims', async () => {
      const accounts = await Promise.all(Array.from({ length: 8 }, () => newAccount()));
      const p = port();
      const now = Date.now();
      const won = await Promise.all(accounts.map((a) => store().tcpAddresses.claimFree(p, a.id, 'node-a', now)));
      assert.equal(won.filter(Boolean).length, 1);
      assert.deepEqual([...(await store().tcpAddresses.takenPorts(p, p, now))], [p]);
    });

    it('keeps a held lease for its account until it lapses, then anyone may take it', async () => {
      const [owner, other] = [await newAccount(), await newAccount()];
      const p = port();
      const now = Date.now();
      assert.equal(await store().tcpAddresses.claimFree(p, owner.id, 'node-a', now), true);
      await store().tcpAddresses.holdLease(p, owner.id, now + 1000);
      assert.equal(await store().tcpAddresses.claimFree(p, other.id, 'node-a', now), false);
      assert.equal(await store().tcpAddresses.claimOwn(p, other.id, 'node-a', now), 'taken');
      assert.equal(await store().tcpAddresses.claimOwn(p, owner.id, 'node-a', now), 'ok');
      // Taken back: held again, then lapsed.
      await store().tcpAddresses.holdLease(p, owner.id, now + 1000);
      assert.equal(await store().tcpAddresses.claimFree(p, other.id, 'node-b', now + 2000), true);
      assert.equal((await store().tcpAddresses.takenPorts(p, p, now + 2000)).has(p), true);
    });

    it('frees a dropped lease at once, and keeps a node’s leases for their accounts after a restart', async () => {
      const [owner, other] = [await newAccount(), await newAccount()];
      const [p, q] = [port(), port()];
      const now = Date.now();
      await store().tcpAddresses.claimFree(p, owner.id, 'node-r', now);
      await store().tcpAddresses.dropLease(p, owner.id);
      assert.equal((await store().tcpAddresses.takenPorts(p, p, now)).size, 0);
      await store().tcpAddresses.claimFree(q, owner.id, 'node-r', now);
      assert.equal(await store().tcpAddresses.holdNodeLeases('node-r', now + 1000), 1);
      assert.equal(await store().tcpAddresses.claimOwn(q, other.id, 'node-s', now), 'taken');
      assert.equal(await store().tcpAddresses.claimOwn(q, owner.id, 'node-s', now), 'ok');
    });

    it('gives a --remote-addr its account’s reservation or own held lease, never a free port', async () => {
      const [owner, other] = [await newAccount(), await newAccount()];
      const [free, leased, reserved] = [port(), port(), port()];
      const now = Date.now();
      assert.equal(await store().tcpAddresses.claimAddress(free, owner.id, 'node-a', now), 'not-yours');
      assert.equal((await store().tcpAddresses.takenPorts(free, free, now)).size, 0);
      assert.ok(await store().tcpAddresses.reserve(owner.id, reserved, now));
      assert.equal(await store().tcpAddresses.claimAddress(reserved, owner.id, 'node-a', now), 'ok');
      assert.equal(await store().tcpAddresses.claimAddress(reserved, other.id, 'node-a', now), 'not-yours');
      assert.equal(await store().tcpAddresses.claimFree(leased, owner.id, 'node-a', now), true);
      assert.equal(await store().tcpAddresses.claimAddress(leased, other.id, 'node-b', now), 'taken');
      await store().tcpAddresses.holdLease(leased, owner.id, now + 1000);
      assert.equal(await store().tcpAddresses.claimAddress(leased, other.id, 'node-b', now), 'taken');
      // Taken back while held: live again, so it stays taken however long the agent runs.
      assert.equal(await store().tcpAddresses.claimAddress(leased, owner.id, 'node-b', now + 500), 'ok');
      assert.equal((await store().tcpAddresses.takenPorts(leased, leased, now + 5000)).has(leased), true);
      // Lapsed: nobody's address any more.
      await store().tcpAddresses.holdLease(leased, owner.id, now + 1000);
      assert.equal(await store().tcpAddresses.claimAddress(leased, owner.id, 'node-b', now + 2000), 'not-yours');
      assert.equal(await store().tcpAddresses.claimAddress(leased, other.id, 'node-b', now + 2000), 'not-yours');
    });

    it('reserves a port for one account: listed, counted, refused to others, deleted only by its owner', async () => {
      const [owner, other] = [await newAccount(), await newAccount()];
      const p = port();
      const now = Date.now();
      const reserved = await store().tcpAddresses.reserve(owner.id, p, now);
      assert.ok(reserved);
      assert.match(reserved.id, /^tcp_[a-z2-7]{16}$/);
      assert.equal(await store().tcpAddresses.reserve(other.id, p, now), undefined);
      assert.equal(await store().tcpAddresses.claimOwn(p, other.id, 'node-a', now), 'not-yours');
      assert.equal(await store().tcpAddresses.claimFree(p, other.id, 'node-a', now), false);
      assert.equal(await store().tcpAddresses.claimOwn(p, owner.id, 'node-a', now), 'ok');
      // A clean exit of the tunnel bound on it keeps the reservation.
      await store().tcpAddresses.dropLease(p, owner.id);
      assert.deepEqual(
        (await store().tcpAddresses.listReserved(owner.id)).map((a) => a.port),
        [p],
      );
      assert.equal(await store().tcpAddresses.countReserved(owner.id), 1);
      assert.equal(await store().tcpAddresses.deleteReserved(other.id, reserved.id), undefined);
      assert.equal((await store().tcpAddresses.deleteReserved(owner.id, reserved.id))?.port, p);
      assert.equal(await store().tcpAddresses.countReserved(owner.id), 0);
    });
  });
}
