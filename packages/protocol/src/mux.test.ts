import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, describe, test } from 'node:test';
import { StreamResetError } from './errors.js';
import { FLAG_END, FrameType } from './frame.js';
import type { StreamDuplex } from './stream-duplex.js';
import { TRANSPORTS, collect, duplexes, muxPair, openDuplex, rawPeer, type MuxPair } from './test-support.js';

/** Resolves on 'close' without listening for 'error', so an unhandled stream error would crash the test. */
function closed(stream: StreamDuplex): Promise<void> {
  return new Promise((resolve) => (stream.closed ? resolve() : stream.on('close', () => resolve())));
}

/** A pair whose sides hand every incoming stream to a handler the test can swap. */
async function pairWithHandlers(kind: (typeof TRANSPORTS)[number], window?: number) {
  const handlers = { dialer: (_s: StreamDuplex): void => undefined, acceptor: (_s: StreamDuplex): void => undefined };
  const pair = await muxPair(kind, {
    window,
    dialer: { onStream: duplexes((s) => handlers.dialer(s)) },
    acceptor: { onStream: duplexes((s) => handlers.acceptor(s)) },
  });
  return { pair, handlers };
}

/** Answers each stream after reading its request body: head (with END when meta asks) and an optional body. */
function respond(stream: StreamDuplex): Promise<void> {
  return collect(stream).then((body) => {
    const meta = stream.meta as { headersEnd: boolean };
    stream.sendHeaders({ s: 200, echo: stream.meta, got: body.toString() }, meta.headersEnd);
    if (!meta.headersEnd) stream.end('response-body');
  });
}

for (const kind of TRANSPORTS) {
  describe(`mux over ${kind}`, () => {
    const pairs: MuxPair[] = [];
    after(() => Promise.all(pairs.map((p) => p.close())));

    for (const opener of ['acceptor', 'dialer'] as const) {
      const answerer = opener === 'acceptor' ? 'dialer' : 'acceptor';
      for (const openEnd of [false, true]) {
        for (const headersEnd of [false, true]) {
          test(`${opener}-opened stream round-trips meta, head and bodies (open end=${openEnd}, headers end=${headersEnd})`, async () => {
            const { pair, handlers } = await pairWithHandlers(kind);
            pairs.push(pair);
            const answered: Promise<void>[] = [];
            handlers[answerer] = (s) => answered.push(respond(s));
            const meta = { m: 'POST', p: '/x?y=1', h: ['a', 'b'], t: 'tun', headersEnd };
            const stream = openDuplex(pair[opener], meta, openEnd);
            if (!openEnd) stream.end('request-body');
            const [head] = (await once(stream, 'headers')) as [{ s: number; echo: unknown; got: string }];
            assert.deepEqual(head, { s: 200, echo: meta, got: openEnd ? '' : 'request-body' });
            assert.deepEqual(stream.headers, head);
            assert.equal((await collect(stream)).toString(), headersEnd ? '' : 'response-body');
            await Promise.all(answered);
            assert.equal(pair.dialer.streamCount, 0, 'dialer forgot the stream');
            assert.equal(pair.acceptor.streamCount, 0, 'acceptor forgot the stream');
          });
        }
      }
    }

    test('streams opened by both sides at once get distinct ids and do not cross', async () => {
      const { pair, handlers } = await pairWithHandlers(kind);
      pairs.push(pair);
      handlers.dialer = handlers.acceptor = (s) => void respond(s);
      const opened = [pair.acceptor, pair.dialer, pair.acceptor, pair.dialer].map((mux, i) => openDuplex(mux, { i, headersEnd: false }));
      assert.deepEqual(
        opened.map((s) => s.id),
        [2, 1, 4, 3],
      );
      opened.forEach((s, i) => s.end(`body-${i}`));
      const heads = await Promise.all(opened.map((s) => once(s, 'headers')));
      heads.forEach(([head], i) => assert.equal((head as { got: string }).got, `body-${i}`));
    });

    test('control messages arrive in order in both directions', async () => {
      const received = { dialer: [] as unknown[], acceptor: [] as unknown[] };
      const count = 300;
      let done!: () => void;
      const all = new Promise<void>((resolve) => (done = resolve));
      const record = (side: 'dialer' | 'acceptor') => (message: unknown) => {
        received[side].push(message);
        if (received.dialer.length === count && received.acceptor.length === count) done();
      };
      const pair = await muxPair(kind, { dialer: { onControl: record('dialer') }, acceptor: { onControl: record('acceptor') } });
      pairs.push(pair);
      const sent = Array.from({ length: count }, (_, i) => ({ type: 'n', i, pad: 'x'.repeat(i) }));
      for (const message of sent) {
        pair.dialer.sendControl(message);
        pair.acceptor.sendControl(message);
      }
      await all;
      assert.deepEqual(received.dialer, sent);
      assert.deepEqual(received.acceptor, sent);
    });

    test('a reset by the opener destroys the peer stream with a remote StreamResetError', async () => {
      const { pair, handlers } = await pairWithHandlers(kind);
      pairs.push(pair);
      const accepted = new Promise<StreamDuplex>((resolve) => (handlers.dialer = resolve));
      const stream = openDuplex(pair.acceptor, { m: 'GET' });
      const peer = await accepted; // no 'error' listener on purpose: a reset must never crash the process
      stream.reset('CANCEL');
      assert.equal(stream.resetCode, 'CANCEL');
      await Promise.all([closed(peer), closed(stream)]);
      assert.ok(peer.errored instanceof StreamResetError, 'peer failed with StreamResetError');
      assert.equal(peer.errored.code, 'CANCEL');
      assert.equal(peer.errored.remote, true);
      assert.equal(peer.resetCode, 'CANCEL');
      assert.equal(stream.errored, null, 'a local reset is not an error for local listeners');
      // An origin still answering after the visitor left: late calls are harmless no-ops.
      peer.sendHeaders({ s: 200 });
      peer.write('late');
      peer.end();
      await new Promise((resolve) => setImmediate(resolve)); // let any late 'error' surface
      assert.equal(pair.dialer.streamCount, 0);
      assert.equal(pair.acceptor.streamCount, 0);
      assert.equal(pair.dialer.isClosed || pair.acceptor.isClosed, false);
    });

    test('a reset by the answerer rejects the wait for headers with its code', async () => {
      const { pair, handlers } = await pairWithHandlers(kind);
      pairs.push(pair);
      handlers.dialer = (s) => s.reset('UPSTREAM_UNREACHABLE');
      const stream = openDuplex(pair.acceptor, { m: 'GET' }, true);
      await assert.rejects(once(stream, 'headers'), { name: 'StreamResetError', code: 'UPSTREAM_UNREACHABLE', remote: true });
      assert.equal(pair.acceptor.streamCount, 0);
    });

    test('a reset in the middle of a response body fails the reader', async () => {
      const { pair, handlers } = await pairWithHandlers(kind);
      pairs.push(pair);
      handlers.dialer = (s) => {
        s.sendHeaders({ s: 200 });
        s.write(Buffer.alloc(100_000));
        s.write(Buffer.alloc(10), () => s.reset('UPSTREAM_ERROR'));
      };
      const stream = openDuplex(pair.acceptor, { m: 'GET' }, true);
      // Read from the start: head, body and reset may all arrive in one socket read, and a
      // reader attached after awaiting 'headers' would come a microtask too late for them.
      const body = collect(stream);
      await once(stream, 'headers');
      await assert.rejects(body, { name: 'StreamResetError', code: 'UPSTREAM_ERROR' });
    });

    test('an abort storm of 10,000 streams leaves no streams and the session usable', async () => {
      const { pair, handlers } = await pairWithHandlers(kind);
      pairs.push(pair);
      let seen = 0;
      handlers.dialer = (s) => {
        if (!(s.meta as { storm?: boolean }).storm) return void respond(s);
        seen++; // no listeners at all on these streams: resets must not crash anything
        if (seen % 3 === 0) s.reset('CANCEL'); // aborts from the answering side too
      };
      for (let i = 0; i < 10_000; i++) openDuplex(pair.acceptor, { storm: true, p: `/${i}` }, i % 2 === 0).reset('CANCEL');
      assert.equal(pair.acceptor.streamCount, 0);
      const stream = openDuplex(pair.acceptor, { headersEnd: false });
      stream.end('after the storm');
      const [head] = await once(stream, 'headers');
      assert.equal((head as { got: string }).got, 'after the storm');
      assert.equal((await collect(stream)).toString(), 'response-body');
      assert.equal(seen, 10_000);
      assert.equal(pair.dialer.streamCount, 0);
      assert.equal(pair.acceptor.streamCount, 0);
      assert.equal(pair.dialer.isClosed || pair.acceptor.isClosed, false);
    });

    test('open() on a closed session throws', async () => {
      const pair = await muxPair(kind);
      pairs.push(pair);
      pair.acceptor.destroy();
      assert.throws(() => openDuplex(pair.acceptor, {}), { name: 'ProtocolError' });
    });
  });
}

describe('mux against a raw peer', () => {
  test('open with end=true sends a single OPEN frame carrying FLAG_END', async () => {
    const raw = rawPeer({ role: 'acceptor' });
    after(() => raw.close());
    const stream = openDuplex(raw.mux, { m: 'GET' }, true);
    raw.mux.sendControl({ type: 'marker' });
    await raw.nextFrame((f) => f.type === FrameType.CONTROL);
    assert.deepEqual(
      raw.frames.map((f) => [f.type, f.flags, f.stream]),
      [
        [FrameType.OPEN, FLAG_END, stream.id],
        [FrameType.CONTROL, 0, 0],
      ],
    );
  });

  test('frames for a reset or unknown stream are dropped and the session stays up', async () => {
    let onControl!: (message: unknown) => void;
    const control = new Promise<unknown>((resolve) => (onControl = resolve));
    const raw = rawPeer({ role: 'dialer', onStream: duplexes((s) => s.reset('NOPE')), onControl: (m) => onControl(m) });
    after(() => raw.close());
    raw.send(FrameType.OPEN, 0, 2, Buffer.from('{"m":"GET"}'));
    const reset = await raw.nextFrame((f) => f.type === FrameType.RESET && f.stream === 2);
    assert.equal(reset.payload.toString(), 'NOPE');
    raw.send(FrameType.DATA, 0, 2, Buffer.from('late'));
    raw.send(FrameType.HEADERS, FLAG_END, 2, Buffer.from('{}'));
    raw.send(FrameType.WINDOW, 0, 2, Buffer.from([0, 0, 1, 0]));
    raw.send(FrameType.RESET, 0, 2, Buffer.from('CANCEL'));
    raw.send(FrameType.DATA, 0, 998, Buffer.from('never opened'));
    raw.send(FrameType.CONTROL, 0, 0, Buffer.from('{"type":"still-alive"}'));
    assert.deepEqual(await control, { type: 'still-alive' });
    assert.equal(raw.mux.isClosed, false);
    assert.equal(raw.mux.streamCount, 0);
  });

  test('a peer exceeding the window gets the stream reset with FLOW_CONTROL', async () => {
    let accepted!: StreamDuplex;
    const raw = rawPeer({ role: 'dialer', window: 16, onStream: duplexes((s) => (accepted = s)) });
    after(() => raw.close());
    raw.send(FrameType.OPEN, 0, 2, Buffer.from('{}'));
    raw.send(FrameType.DATA, 0, 2, Buffer.alloc(10));
    raw.send(FrameType.DATA, 0, 2, Buffer.alloc(7));
    const reset = await raw.nextFrame((f) => f.type === FrameType.RESET && f.stream === 2);
    assert.equal(reset.payload.toString(), 'FLOW_CONTROL');
    await closed(accepted);
    assert.equal(accepted.resetCode, 'FLOW_CONTROL');
    assert.equal(raw.mux.streamCount, 0);
  });
});
