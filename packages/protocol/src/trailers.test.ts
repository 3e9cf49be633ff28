import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallbackStream } from './callback-stream.js';
import { FLAG_END, FrameType } from './frame.js';
import { FEATURE_TRAILERS, LOCAL_FEATURES, parseFeatures } from './handshake.js';
import { MAX_TRAILER_FIELDS, trailerFields } from './headers.js';
import type { StreamDuplex } from './stream-duplex.js';
import { collect, duplexes, muxPair, openDuplex, rawPeer } from './test-support.js';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

describe('TRAILERS frames', () => {
  test('a CallbackStream ends with trailers after its body; the peer StreamDuplex has them at its end', async () => {
    let accept!: (stream: StreamDuplex) => void;
    const accepted = new Promise<StreamDuplex>((resolve) => (accept = resolve));
    const pair = await muxPair('chunked', { dialer: { peerTrailers: true }, acceptor: { peerTrailers: true, onStream: duplexes(accept) } });
    try {
      const stream = pair.dialer.open({ m: 'POST' }, { onReset: () => undefined });
      stream.write(Buffer.alloc(300_000, 7)); // beyond one frame: the trailers wait for every byte
      stream.endWithTrailers(['x-sum', '300000']);
      const peer = await accepted;
      const body = await collect(peer);
      assert.equal(body.length, 300_000);
      assert.deepEqual(peer.trailers, ['x-sum', '300000']);
    } finally {
      await pair.close();
    }
  });

  test('a paused CallbackStream hears its trailers with onEnd, after the data that waited', async () => {
    let accept!: (stream: CallbackStream) => void;
    const accepted = new Promise<CallbackStream>((resolve) => (accept = resolve));
    const pair = await muxPair('tcp', {
      dialer: { peerTrailers: true },
      acceptor: { peerTrailers: true, onStream: accept },
    });
    try {
      const sender = openDuplex(pair.dialer, { m: 'POST' });
      sender.write('body');
      sender.endWithTrailers(['grpc-status', '0']);
      const stream = await accepted;
      const events: string[] = [];
      const ended = new Promise<void>((resolve) => {
        stream.pause();
        stream.attach({
          onData: (chunk) => events.push(`data:${chunk.toString()}`),
          onEnd: () => {
            events.push(`end:${JSON.stringify(stream.trailers)}`);
            resolve();
          },
          onReset: () => undefined,
        });
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(events, []);
      stream.resume();
      await ended;
      assert.deepEqual(events, ['data:body', 'end:["grpc-status","0"]']);
    } finally {
      await pair.close();
    }
  });

  test('towards a peer without the trailers feature, the trailers are dropped and a plain END is sent', async () => {
    const peer = rawPeer({ role: 'dialer' });
    try {
      const stream = peer.mux.open({ m: 'GET' }, { onReset: () => undefined });
      stream.endWithTrailers(['x-sum', '1']);
      const end = await peer.nextFrame((frame) => frame.stream === stream.id && (frame.flags & FLAG_END) !== 0);
      assert.equal(end.type, FrameType.DATA);
      assert.ok(!peer.frames.some((frame) => frame.type === FrameType.TRAILERS));
    } finally {
      await peer.close();
    }
  });

  test('a TRAILERS frame from the peer ends its side; later frames of it are ignored', async () => {
    let accept!: (stream: CallbackStream) => void;
    const accepted = new Promise<CallbackStream>((resolve) => (accept = resolve));
    const peer = rawPeer({ role: 'acceptor', onStream: accept });
    try {
      peer.send(FrameType.OPEN, 0, 1, json({ m: 'POST', b: 1 }));
      const stream = await accepted;
      const chunks: string[] = [];
      const ended = new Promise<void>((resolve) =>
        stream.attach({ onData: (chunk) => chunks.push(chunk.toString()), onEnd: resolve, onReset: () => undefined }),
      );
      peer.send(FrameType.DATA, 0, 1, Buffer.from('a'));
      peer.send(FrameType.TRAILERS, FLAG_END, 1, json(['x-a', '1']));
      peer.send(FrameType.DATA, 0, 1, Buffer.from('late'));
      await ended;
      assert.deepEqual(chunks, ['a']);
      assert.deepEqual(stream.trailers, ['x-a', '1']);
    } finally {
      await peer.close();
    }
  });
});

describe('trailerFields', () => {
  test('keeps token names (lower-cased) and clean values; drops bad, forbidden, pseudo and internal fields', () => {
    assert.deepEqual(
      trailerFields([
        'X-Checksum',
        'abc',
        'grpc-status',
        '0',
        'bad name',
        'v',
        'x-split',
        'a\r\nx-injected: 1',
        'content-length',
        '10',
        'transfer-encoding',
        'chunked',
        ':status',
        '200',
        'x-svc-tunnel',
        'forged',
        'set-cookie',
        'a=b',
        'x-wide',
        'é€',
      ]),
      ['x-checksum', 'abc', 'grpc-status', '0'],
    );
  });

  test('a payload of the wrong shape yields no field', () => {
    for (const payload of [undefined, null, 'x', { a: 'b' }, ['odd'], ['a', 1], [1, 'a']]) assert.deepEqual(trailerFields(payload), []);
  });

  test(`keeps at most ${MAX_TRAILER_FIELDS} fields`, () => {
    const many = Array.from({ length: 100 }, (_, i) => [`x-${i}`, String(i)]).flat();
    assert.equal(trailerFields(many).length, MAX_TRAILER_FIELDS * 2);
  });
});

describe('handshake features', () => {
  test('parses a comma-separated list in any case, and nothing from an older peer', () => {
    assert.ok(parseFeatures(LOCAL_FEATURES).has(FEATURE_TRAILERS));
    assert.deepEqual([...parseFeatures(' Trailers , info,')], ['trailers', 'info']);
    assert.equal(parseFeatures(undefined).size, 0);
    assert.ok(parseFeatures(['a', 'trailers']).has('trailers'));
  });
});
