import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import { StreamResetError } from './errors.js';
import { FrameType, MAX_FRAME_PAYLOAD, ProtocolError, encodeFrame, encodeHeader } from './frame.js';
import type { StreamDuplex } from './stream-duplex.js';
import { TRANSPORTS, collect, duplexes, muxPair, openDuplex, rawPeer, sha256, writeAll, type MuxPair } from './test-support.js';

function closed(stream: StreamDuplex): Promise<void> {
  return new Promise((resolve) => (stream.closed ? resolve() : stream.on('close', () => resolve())));
}

describe('a peer that breaks the protocol closes the session with a ProtocolError', () => {
  const cases: Array<[string, Buffer]> = [
    ['malformed JSON in a control message', encodeFrame(FrameType.CONTROL, 0, 0, Buffer.from('{"type":'))],
    ['a frame longer than MAX_FRAME_PAYLOAD', encodeHeader(FrameType.DATA, 0, 2, MAX_FRAME_PAYLOAD + 1)],
    ['an unknown frame type on stream 0', encodeFrame(42, 0, 0, Buffer.from('x'))],
    ['DATA on stream 0', encodeFrame(FrameType.DATA, 0, 0, Buffer.from('x'))],
    ['malformed JSON in OPEN', encodeFrame(FrameType.OPEN, 0, 2, Buffer.from('nope'))],
    ['OPEN with the dialer’s own parity', encodeFrame(FrameType.OPEN, 0, 1, Buffer.from('{}'))],
    [
      'an OPEN that reuses a closed stream id',
      Buffer.concat([
        encodeFrame(FrameType.OPEN, 0, 2, Buffer.from('{}')),
        encodeFrame(FrameType.RESET, 0, 2, Buffer.from('CANCEL')),
        encodeFrame(FrameType.OPEN, 0, 2, Buffer.from('{}')),
      ]),
    ],
    [
      'a WINDOW frame without its 4-byte increment',
      Buffer.concat([encodeFrame(FrameType.OPEN, 0, 2, Buffer.from('{}')), encodeFrame(FrameType.WINDOW, 0, 2, Buffer.from([1]))]),
    ],
  ];
  for (const [name, bytes] of cases) {
    test(name, async () => {
      const opened: StreamDuplex[] = [];
      const raw = rawPeer({ role: 'dialer', onStream: duplexes((s) => opened.push(s)) });
      after(() => raw.close());
      let closes = 0;
      raw.mux.on('close', () => closes++);
      const closing = once(raw.mux, 'close');
      raw.sendBytes(bytes);
      const [error] = (await closing) as [Error];
      assert.ok(error instanceof ProtocolError, `got ${String(error)}`);
      assert.equal(raw.mux.isClosed, true);
      assert.equal(raw.mux.streamCount, 0);
      await Promise.all(opened.map(closed));
      assert.equal(closes, 1);
    });
  }
});

for (const kind of TRANSPORTS) {
  describe(`session lifetime over ${kind}`, () => {
    const pairs: MuxPair[] = [];
    after(() => Promise.all(pairs.map((p) => p.close())));

    test('losing the socket destroys every open stream with SESSION_CLOSED and emits close once', async () => {
      const accepted: StreamDuplex[] = [];
      let allAccepted!: () => void;
      const ready = new Promise<void>((resolve) => (allAccepted = resolve));
      const pair = await muxPair(kind, {
        dialer: {
          onStream: duplexes((s) => {
            accepted.push(s);
            if (accepted.length === 3) allAccepted();
          }),
        },
      });
      pairs.push(pair);
      const closes = { dialer: [] as unknown[], acceptor: [] as unknown[] };
      pair.dialer.on('close', (e) => closes.dialer.push(e));
      pair.acceptor.on('close', (e) => closes.acceptor.push(e));
      const opened = [1, 2, 3].map(() => openDuplex(pair.acceptor, { m: 'GET' }));
      await ready;
      pair.dialerSocket.destroy();
      const streams = [...opened, ...accepted];
      await Promise.all([...streams.map(closed), once(pair.acceptorSocket, 'close'), once(pair.dialerSocket, 'close')]);
      for (const stream of streams) {
        assert.ok(stream.errored instanceof StreamResetError, 'stream failed with StreamResetError');
        assert.equal(stream.errored.code, 'SESSION_CLOSED');
      }
      assert.equal(closes.dialer.length, 1);
      assert.equal(closes.acceptor.length, 1);
      assert.equal(pair.dialer.streamCount + pair.acceptor.streamCount, 0);
    });

    test('close() sends GOAWAY with its reason and closes both sides without error', async () => {
      const pair = await muxPair(kind);
      pairs.push(pair);
      const goaway = once(pair.acceptor, 'goaway');
      const acceptorClosed = once(pair.acceptor, 'close');
      const dialerClosed = once(pair.dialer, 'close');
      pair.dialer.close('agent closing');
      assert.deepEqual(await goaway, ['agent closing']);
      assert.deepEqual(await acceptorClosed, [undefined]);
      assert.deepEqual(await dialerClosed, [undefined]);
    });
  });
}

describe('heartbeat over tcp', () => {
  const pairs: MuxPair[] = [];
  after(() => Promise.all(pairs.map((p) => p.close())));

  test('a peer that stops reading is declared dead after the timeout', async () => {
    const pair = await muxPair('tcp');
    pairs.push(pair);
    pair.acceptor.startHeartbeat(20, 60);
    pair.dialerSocket.pause(); // the agent stops reading, so it never answers a ping
    const [error] = (await once(pair.acceptor, 'close')) as [Error];
    assert.ok(error instanceof ProtocolError, 'heartbeat failure is a ProtocolError');
    assert.match(error.message, /heartbeat/);
  });

  test('a session that answers stays open, also while a bulk transfer is in flight', async () => {
    const body = randomBytes(4 * 1024 * 1024);
    const pair = await muxPair('tcp', {
      dialer: {
        onStream: duplexes((s) => {
          s.sendHeaders({ s: 200 });
          void writeAll(s, body);
        }),
      },
    });
    pairs.push(pair);
    pair.acceptor.startHeartbeat(20, 60);
    pair.dialer.startHeartbeat(20, 60);
    const stream = openDuplex(pair.acceptor, {}, true);
    assert.equal(sha256(await collect(stream)), sha256(body));
    // Several timeouts' worth of answered pings.
    for (let i = 0; i < 8; i++) {
      const [rtt] = (await once(pair.acceptor, 'pong')) as [number];
      assert.ok(rtt >= 0, 'rtt is a duration');
    }
    assert.equal(pair.acceptor.isClosed, false);
    assert.equal(pair.dialer.isClosed, false);
    assert.equal(typeof pair.acceptor.lastPingRttMs, 'number');
  });
});
