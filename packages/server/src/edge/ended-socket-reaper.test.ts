import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { test } from 'node:test';
import { IdTable } from '@svcrouter/protocol';
import { EndedSocketReaper } from './ended-socket-reaper.js';

/** The parts of a socket the reaper reads, set by the test. */
interface FakeSocket {
  writableEnded: boolean;
  writableFinished: boolean;
  writableLength: number;
  destroyed: boolean;
  destroy(): void;
}

function fakeSocket(state: Partial<FakeSocket>): FakeSocket {
  const socket: FakeSocket = {
    writableEnded: false,
    writableFinished: false,
    writableLength: 0,
    destroyed: false,
    destroy: () => (socket.destroyed = true),
    ...state,
  };
  return socket;
}

/** A reaper over `sockets` whose timer never fires within the test: sweeps are called by hand. */
function reaperOf(sockets: FakeSocket[]): EndedSocketReaper {
  const table = new IdTable<Socket>();
  for (const socket of sockets) table.add(socket as unknown as Socket);
  return new EndedSocketReaper(table, 3_600_000);
}

test('an ended socket whose peer never closes is destroyed at the second look, not the first', () => {
  const finished = fakeSocket({ writableEnded: true, writableFinished: true });
  const stalled = fakeSocket({ writableEnded: true, writableLength: 4096 });
  const reaper = reaperOf([finished, stalled]);
  reaper.sweep();
  assert.equal(finished.destroyed || stalled.destroyed, false, 'the grace runs from the first look');
  reaper.sweep();
  assert.equal(finished.destroyed, true);
  assert.equal(stalled.destroyed, true);
  reaper.stop();
});

test('an ended socket whose reader keeps taking its queued bytes is let finish', () => {
  const draining = fakeSocket({ writableEnded: true, writableLength: 1_000_000 });
  const reaper = reaperOf([draining]);
  for (let look = 0; look < 5; look++) {
    reaper.sweep();
    draining.writableLength -= 100_000;
  }
  assert.equal(draining.destroyed, false);
  reaper.sweep();
  reaper.sweep(); // no progress between these two looks
  assert.equal(draining.destroyed, true);
  reaper.stop();
});

test('a socket the edge has not ended is never touched, however idle', () => {
  const open = fakeSocket({ writableLength: 10 });
  const reaper = reaperOf([open]);
  for (let look = 0; look < 3; look++) reaper.sweep();
  assert.equal(open.destroyed, false);
  reaper.stop();
});
