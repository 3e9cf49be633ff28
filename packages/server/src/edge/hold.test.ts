import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Holds, type HoldTicket } from './hold.js';
import type { Binding } from './router.js';

/** A ticket that records what happened to it; `settled` resolves on delivery or expiry. */
function ticket(): HoldTicket & { outcome: string | undefined; settled: Promise<string> } {
  let settle: (outcome: string) => void = () => undefined;
  const settled = new Promise<string>((resolve) => (settle = resolve));
  const record = {
    outcome: undefined as string | undefined,
    settled,
    deliver(binding: Binding) {
      record.outcome = `delivered to ${binding.accountId}`;
      settle(record.outcome);
    },
    expire() {
      record.outcome = 'expired';
      settle(record.outcome);
    },
  };
  return record;
}

function binding(hostname: string, accountId: string): Binding {
  return { hostname, accountId } as Binding;
}

const LONG = Date.now() + 60_000;

describe('Holds', () => {
  it('delivers held requests in arrival order to the account that held the name', () => {
    const holds = new Holds({ holdMs: 60_000 });
    const order: number[] = [];
    for (let i = 0; i < 3; i++) {
      holds.hold('a.example', 'acc_1', LONG, 10, { deliver: () => order.push(i), expire: () => assert.fail('expired') });
    }
    assert.equal(holds.release(binding('a.example', 'acc_1')), 3);
    assert.deepEqual(order, [0, 1, 2]);
    assert.equal(holds.count('a.example'), 0);
    holds.close();
  });

  it('refuses, never delivers, the requests held for one account when another binds the name', () => {
    const holds = new Holds({ holdMs: 60_000 });
    const held = ticket();
    holds.hold('a.example', 'acc_1', LONG, 10, held);
    assert.equal(holds.release(binding('a.example', 'acc_2')), 0);
    assert.equal(held.outcome, 'expired');
  });

  it('holds at most maxRequests and maxBytes per name; other names have their own bounds', () => {
    const holds = new Holds({ holdMs: 60_000, maxRequests: 2, maxBytes: 100 });
    assert.ok(holds.hold('a.example', 'acc_1', LONG, 10, ticket()));
    assert.ok(holds.hold('a.example', 'acc_1', LONG, 10, ticket()));
    assert.equal(holds.hold('a.example', 'acc_1', LONG, 10, ticket()), undefined);
    assert.ok(holds.hold('b.example', 'acc_1', LONG, 90, ticket()));
    assert.equal(holds.hold('b.example', 'acc_1', LONG, 11, ticket()), undefined);
    assert.equal(holds.hold('c.example', 'acc_1', LONG, 101, ticket()), undefined);
    holds.close();
  });

  it('frees the slot and the bytes of a request whose visitor left, and calls nothing for it', () => {
    const holds = new Holds({ holdMs: 60_000, maxRequests: 1, maxBytes: 100 });
    const left = ticket();
    const cancel = holds.hold('a.example', 'acc_1', LONG, 100, left)!;
    assert.equal(cancel(), true);
    assert.equal(cancel(), false);
    const next = ticket();
    assert.ok(holds.hold('a.example', 'acc_1', LONG, 100, next));
    holds.release(binding('a.example', 'acc_1'));
    assert.equal(left.outcome, undefined);
    assert.equal(next.outcome, 'delivered to acc_1');
  });

  it('expires a request at its hold, or at the end of the grace period when that comes first', async () => {
    const holds = new Holds({ holdMs: 20 });
    const byHold = ticket();
    holds.hold('a.example', 'acc_1', LONG, 10, byHold);
    const byGrace = ticket();
    const long = new Holds({ holdMs: 60_000 });
    long.hold('b.example', 'acc_1', Date.now() + 20, 10, byGrace);
    assert.equal(await byHold.settled, 'expired');
    assert.equal(await byGrace.settled, 'expired');
    assert.equal(holds.count('a.example'), 0);
    long.close();
  });

  it('holds nothing when off, past the grace period, or once closed, and close refuses what it held', () => {
    assert.equal(new Holds({ holdMs: 0 }).hold('a.example', 'acc_1', LONG, 10, ticket()), undefined);
    const holds = new Holds({ holdMs: 60_000 });
    assert.equal(holds.hold('a.example', 'acc_1', Date.now() - 1, 10, ticket()), undefined);
    const held = ticket();
    holds.hold('a.example', 'acc_1', LONG, 10, held);
    holds.close();
    assert.equal(held.outcome, 'expired');
    assert.equal(holds.hold('a.example', 'acc_1', LONG, 10, ticket()), undefined);
  });

  it('still delivers the other requests when one throws while starting', () => {
    const errors: unknown[] = [];
    const holds = new Holds({ holdMs: 60_000, onError: (error) => errors.push(error) });
    holds.hold('a.example', 'acc_1', LONG, 10, {
      deliver: () => {
        throw new Error('boom');
      },
      expire: () => undefined,
    });
    const second = ticket();
    holds.hold('a.example', 'acc_1', LONG, 10, second);
    assert.equal(holds.release(binding('a.example', 'acc_1')), 2);
    assert.equal(second.outcome, 'delivered to acc_1');
    assert.equal(errors.length, 1);
  });
});
