import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import type { CallbackStream } from './callback-stream.js';
import { FrameType } from './frame.js';
import type { StreamDuplex } from './stream-duplex.js';
import { collect, duplexes, muxPair, openDuplex, rawPeer } from './test-support.js';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

describe('INFO frames (1xx heads before HEADERS)', () => {
  test('a CallbackStream hears each INFO in order, then the reply head; INFO after HEADERS is dropped', async () => {
    const pair = await muxPair('tcp', {
      dialer: {
        onStream: (stream: CallbackStream) => {
          stream.attach({ onReset: () => undefined });
          stream.sendInfo({ s: 100, h: [] });
          stream.sendInfo({ s: 103, h: ['link', '</a.css>; rel=preload'] });
          stream.sendHeaders({ s: 200, h: [] });
          stream.sendInfo({ s: 103, h: ['link', '</late.css>'] }); // after the head: not sent
          stream.end();
        },
      },
    });
    try {
      const seen: unknown[] = [];
      await new Promise<void>((resolve, reject) => {
        pair.acceptor.open(
          {},
          {
            onInfo: (meta) => seen.push(['info', meta]),
            onHeaders: (meta) => seen.push(['headers', meta]),
            onEnd: resolve,
            onReset: reject,
          },
          true,
        );
      });
      assert.deepEqual(seen, [
        ['info', { s: 100, h: [] }],
        ['info', { s: 103, h: ['link', '</a.css>; rel=preload'] }],
        ['headers', { s: 200, h: [] }],
      ]);
    } finally {
      await pair.close();
    }
  });

  test("a StreamDuplex emits 'info' before 'headers'", async () => {
    const pair = await muxPair('tcp', {
      dialer: {
        onStream: duplexes((stream: StreamDuplex) => {
          stream.sendInfo({ s: 103, h: ['link', '</b.js>'] });
          stream.sendHeaders({ s: 204, h: [] }, true);
        }),
      },
    });
    try {
      const stream = openDuplex(pair.acceptor, {}, true);
      const events: string[] = [];
      stream.on('info', (meta: { s: number }) => events.push(`info ${meta.s}`));
      stream.on('headers', (meta: { s: number }) => events.push(`headers ${meta.s}`));
      await collect(stream);
      assert.deepEqual(events, ['info 103', 'headers 204']);
    } finally {
      await pair.close();
    }
  });

  test('an INFO frame with malformed JSON is a protocol error that closes the session', async () => {
    const peer = rawPeer({ role: 'acceptor' });
    try {
      const stream = openDuplex(peer.mux, {}, true);
      stream.on('error', () => undefined);
      const closed = once(peer.mux, 'close');
      peer.send(FrameType.INFO, 0, stream.id, Buffer.from('{not json'));
      const [error] = (await closed) as [Error | undefined];
      assert.equal(error?.name, 'ProtocolError');
    } finally {
      await peer.close();
    }
  });

  test('an INFO frame for an unknown stream is dropped like any late frame', async () => {
    const peer = rawPeer({ role: 'acceptor' });
    try {
      peer.send(FrameType.INFO, 0, 1000, json({ s: 103, h: [] }));
      const stream = openDuplex(peer.mux, {}, true);
      peer.send(FrameType.HEADERS, 0, stream.id, json({ s: 200, h: [] }));
      const [head] = await once(stream, 'headers');
      assert.deepEqual(head, { s: 200, h: [] });
      assert.equal(peer.mux.isClosed, false);
    } finally {
      await peer.close();
    }
  });
});
