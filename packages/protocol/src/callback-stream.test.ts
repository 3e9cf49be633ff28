import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import type { CallbackStream, CallbackStreamHandler } from './callback-stream.js';
import { StreamResetError } from './errors.js';
import { FLAG_END, FrameType } from './frame.js';
import { INITIAL_STREAM_WINDOW } from './mux.js';
import { MAX_STREAM_WINDOW } from './mux-window.js';
import { streamDuplex, type StreamDuplex } from './stream-duplex.js';
import { TRANSPORTS, collect, duplexes, muxPair, openDuplex, rawPeer, sha256, writeAll } from './test-support.js';

const MiB = 1024 * 1024;

/** What a handler saw, and a promise for its end or reset. */
interface Received {
  headers: unknown;
  body(): Buffer;
  settled: Promise<StreamResetError | undefined>;
  maxBuffered: number;
}

/**
 * A handler that collects everything; with `slow`, it pauses after every 16 KiB it takes and
 * resumes a macrotask later, so the sender outruns it.
 */
function receiver(slow = false): { handler: CallbackStreamHandler; received: Received; bind(stream: CallbackStream): void } {
  const chunks: Buffer[] = [];
  let sincePause = 0;
  let settle!: (error: StreamResetError | undefined) => void;
  let stream: CallbackStream | undefined;
  const received: Received = {
    headers: undefined,
    body: () => Buffer.concat(chunks),
    settled: new Promise((resolve) => (settle = resolve)),
    maxBuffered: 0,
  };
  const handler: CallbackStreamHandler = {
    onHeaders: (meta) => (received.headers = meta),
    onData: (chunk) => {
      chunks.push(chunk);
      sincePause += chunk.length;
      if (!slow || !stream || sincePause < 16 * 1024) return;
      sincePause = 0;
      received.maxBuffered = Math.max(received.maxBuffered, stream.receiveBuffered);
      stream.pause();
      setImmediate(() => stream!.resume());
    },
    onEnd: () => settle(undefined),
    onReset: (error) => settle(error),
  };
  return { handler, received, bind: (s) => (stream = s) };
}

/** Writes `data` through a CallbackStream in `chunkSize` pieces, waiting for onDrain whenever write() says so, then ends it. */
function writeThrough(stream: CallbackStream, drained: () => Promise<void>, data: Buffer, chunkSize = 64 * 1024): Promise<void> {
  return (async () => {
    for (let offset = 0; offset < data.length; offset += chunkSize) {
      if (!stream.write(data.subarray(offset, offset + chunkSize))) await drained();
    }
    stream.end();
  })();
}

/** A drain signal for writeThrough: resolves the next wait on each onDrain. */
function drainSignal(): { onDrain(): void; wait(): Promise<void> } {
  let wake: (() => void) | undefined;
  return {
    onDrain: () => wake?.(),
    wait: () => new Promise<void>((resolve) => (wake = resolve)),
  };
}

for (const kind of TRANSPORTS) {
  describe(`CallbackStream over ${kind}`, () => {
    test('a body-less request gets its head and a large body; both sides forget the stream', async () => {
      const body = randomBytes(5 * MiB + 123);
      const pair = await muxPair(kind, {
        dialer: {
          onStream: (stream) => {
            const drain = drainSignal();
            stream.attach({ onReset: () => undefined, onDrain: drain.onDrain, onEnd: () => undefined });
            assert.deepEqual(stream.meta, { path: '/big' });
            stream.sendHeaders({ s: 200 });
            void writeThrough(stream, drain.wait, body, 100_000);
          },
        },
      });
      try {
        const { handler, received } = receiver();
        const stream = pair.acceptor.open({ path: '/big' }, handler, true);
        assert.equal(await received.settled, undefined);
        assert.deepEqual(received.headers, { s: 200 });
        assert.equal(sha256(received.body()), sha256(body));
        assert.equal(stream.closed, true);
        assert.equal(pair.acceptor.streamCount, 0);
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal(pair.dialer.streamCount, 0);
      } finally {
        await pair.close();
      }
    });

    test('a slow reader that pauses holds the sender within the window, and gets every byte in order', async () => {
      const body = randomBytes(6 * MiB);
      const { handler, received, bind } = receiver(true);
      const pair = await muxPair(kind, {
        dialer: {
          onStream: (stream) => {
            bind(stream);
            stream.attach(handler);
          },
        },
      });
      try {
        const drain = drainSignal();
        const stream = pair.acceptor.open({ upload: true }, { onReset: () => undefined, onDrain: drain.onDrain });
        await writeThrough(stream, drain.wait, body);
        assert.equal(await received.settled, undefined);
        assert.equal(sha256(received.body()), sha256(body));
        assert.ok(received.maxBuffered <= MAX_STREAM_WINDOW, `held ${received.maxBuffered} bytes`);
      } finally {
        await pair.close();
      }
    });

    test('a paused reader stops the writer at the window; resume() lets everything through', async () => {
      let accepted!: CallbackStream;
      const { handler, received } = receiver();
      const pair = await muxPair(kind, {
        dialer: {
          onStream: (stream) => {
            accepted = stream;
            stream.pause();
            stream.attach(handler);
          },
        },
      });
      try {
        const body = randomBytes(INITIAL_STREAM_WINDOW + 64 * 1024);
        let drains = 0;
        const stream = pair.acceptor.open({}, { onReset: () => undefined, onDrain: () => drains++ });
        assert.equal(stream.write(body), false, 'more than the window cannot all leave');
        stream.end();
        while (accepted === undefined || accepted.receiveBuffered < INITIAL_STREAM_WINDOW) await new Promise((r) => setImmediate(r));
        assert.equal(accepted.receiveBuffered, INITIAL_STREAM_WINDOW, 'exactly the window arrived');
        assert.equal(received.body().length, 0, 'nothing delivered while paused');
        assert.equal(drains, 0);
        accepted.resume();
        assert.equal(await received.settled, undefined);
        assert.equal(sha256(received.body()), sha256(body));
        assert.equal(drains, 1, 'onDrain once the held bytes left');
      } finally {
        await pair.close();
      }
    });
  });
}

describe('CallbackStream resets', () => {
  test('a local reset reaches the peer as a reset and calls back nothing locally', async () => {
    const peer = receiver();
    const pair = await muxPair('tcp', {
      dialer: { onStream: (stream) => stream.attach(peer.handler) },
    });
    try {
      let calls = 0;
      const stream = pair.acceptor.open({}, { onReset: () => calls++, onData: () => calls++ });
      stream.write(Buffer.from('part of a body'));
      stream.reset('CANCEL');
      const error = await peer.received.settled;
      assert.ok(error instanceof StreamResetError);
      assert.equal(error.code, 'CANCEL');
      assert.equal(error.remote, true);
      assert.equal(stream.resetCode, 'CANCEL');
      assert.equal(calls, 0);
      assert.equal(pair.acceptor.streamCount, 0);
    } finally {
      await pair.close();
    }
  });

  test('a session that closes resets open streams with SESSION_CLOSED', async () => {
    const pair = await muxPair('tcp', {
      dialer: { onStream: (stream) => stream.attach({ onReset: () => undefined }) },
    });
    try {
      const { handler, received } = receiver();
      pair.acceptor.open({}, handler, true);
      pair.dialer.destroy();
      const error = await received.settled;
      assert.equal(error?.code, 'SESSION_CLOSED');
    } finally {
      await pair.close();
    }
  });

  test('a peer that sends beyond the window gets FLOW_CONTROL, and the owner hears of it', async () => {
    const raw = rawPeer({ role: 'acceptor', window: 1024 });
    try {
      const { handler, received } = receiver();
      const stream = raw.mux.open({}, handler, true);
      stream.pause(); // nothing is taken, so no credit goes back: the peer has 1024 bytes in all
      await raw.nextFrame((f) => f.type === FrameType.OPEN);
      raw.send(FrameType.HEADERS, 0, stream.id, Buffer.from('{"s":200}'));
      raw.send(FrameType.DATA, 0, stream.id, Buffer.alloc(1025));
      const reset = await raw.nextFrame((f) => f.type === FrameType.RESET);
      assert.equal(reset.payload.toString(), 'FLOW_CONTROL');
      const error = await received.settled;
      assert.equal(error?.code, 'FLOW_CONTROL');
      assert.equal(error?.remote, false);
    } finally {
      await raw.close();
    }
  });

  test('an OPEN with FLAG_END is delivered as ended when the handler attaches', async () => {
    const raw = rawPeer({ role: 'dialer', onStream: (stream) => stream.attach(seen.handler) });
    const seen = receiver();
    try {
      raw.send(FrameType.OPEN, FLAG_END, 2, Buffer.from('{"m":"GET"}'));
      assert.equal(await seen.received.settled, undefined);
    } finally {
      await raw.close();
    }
  });
});

describe('CallbackStream with a StreamDuplex peer', () => {
  test('a CallbackStream request is answered by a Duplex', async () => {
    const body = randomBytes(3 * MiB);
    const pair = await muxPair('tcp', {
      dialer: {
        onStream: duplexes((stream: StreamDuplex) => {
          stream.sendHeaders({ s: 201 });
          void collect(stream).then((upload) => writeAll(stream, Buffer.concat([upload, body])));
        }),
      },
    });
    try {
      const { handler, received } = receiver();
      const drain = drainSignal();
      const stream = pair.acceptor.open({}, { ...handler, onDrain: drain.onDrain });
      await writeThrough(stream, drain.wait, Buffer.from('upload:'));
      assert.equal(await received.settled, undefined);
      assert.deepEqual(received.headers, { s: 201 });
      assert.equal(sha256(received.body()), sha256(Buffer.concat([Buffer.from('upload:'), body])));
    } finally {
      await pair.close();
    }
  });

  test('a Duplex request is answered by a CallbackStream; the handler picks a Duplex or callbacks by metadata', async () => {
    const body = randomBytes(2 * MiB);
    const pair = await muxPair('tcp', {
      dialer: {
        onStream: (stream) => {
          if ((stream.meta as { kind: string }).kind !== 'callbacks') return streamDuplex(stream).reset('DUPLEX');
          const drain = drainSignal();
          stream.attach({ onReset: () => undefined, onDrain: drain.onDrain });
          stream.sendHeaders({ s: 200 });
          void writeThrough(stream, drain.wait, body);
        },
      },
    });
    try {
      const duplex = openDuplex(pair.acceptor, { kind: 'duplex' }, true);
      const [error] = (await once(duplex, 'error')) as [StreamResetError];
      assert.equal(error.code, 'DUPLEX');
      const stream = openDuplex(pair.acceptor, { kind: 'callbacks' }, true);
      const [head] = await once(stream, 'headers');
      assert.deepEqual(head, { s: 200 });
      assert.equal(sha256(await collect(stream)), sha256(body));
    } finally {
      await pair.close();
    }
  });
});
