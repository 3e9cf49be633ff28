import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  FLAG_ACK,
  FLAG_END,
  FRAME_HEADER_BYTES,
  FrameDecoder,
  FrameType,
  MAX_FRAME_PAYLOAD,
  ProtocolError,
  encodeFrame,
  encodeHeader,
  type Frame,
} from './frame.js';
import { prng } from './test-support.js';

/** Decodes `chunks` in order and returns every frame with its payload copied. */
function decodeAll(chunks: Iterable<Buffer>): Frame[] {
  const frames: Frame[] = [];
  const decoder = new FrameDecoder((frame) => frames.push({ ...frame, payload: Buffer.from(frame.payload) }));
  for (const chunk of chunks) decoder.push(chunk);
  assert.equal(decoder.bufferedBytes, 0, 'no partial frame left over');
  return frames;
}

function* pieces(bytes: Buffer, size: () => number): Generator<Buffer> {
  for (let offset = 0; offset < bytes.length;) {
    const n = size();
    yield bytes.subarray(offset, offset + n);
    offset += n;
  }
}

/** A mixed sequence of frames: empty, tiny, around the coalescing size, and large. */
function sampleFrames(): Frame[] {
  const random = prng(42);
  const sizes = [0, 1, 9, 10, 11, 100, 4095, 4096, 4097, 65_536, 300_000];
  const frames: Frame[] = [];
  for (let i = 0; i < 200; i++) {
    const size = sizes[i % sizes.length]!;
    frames.push({
      type: i % 8,
      flags: i % 3 === 0 ? FLAG_END : i % 3 === 1 ? FLAG_ACK : 0,
      stream: i === 0 ? 0 : Math.floor(random() * 0xffffffff),
      payload: randomBytes(size),
    });
  }
  return frames;
}

describe('frame encoding', () => {
  test('encodeFrame round-trips type, flags, stream id and payload', () => {
    const frame = { type: FrameType.DATA, flags: FLAG_END, stream: 0xfffffffe, payload: Buffer.from('hello') };
    assert.deepEqual(decodeAll([encodeFrame(frame.type, frame.flags, frame.stream, frame.payload)]), [frame]);
  });

  test('encodeFrame without payload is a bare header with length 0', () => {
    const bytes = encodeFrame(FrameType.PING, FLAG_ACK, 0);
    assert.equal(bytes.length, FRAME_HEADER_BYTES);
    assert.deepEqual(decodeAll([bytes]), [{ type: FrameType.PING, flags: FLAG_ACK, stream: 0, payload: Buffer.alloc(0) }]);
  });

  test('encodeHeader followed by the payload equals encodeFrame', () => {
    const payload = randomBytes(5000);
    const split = Buffer.concat([encodeHeader(FrameType.DATA, 0, 7, payload.length), payload]);
    assert.deepEqual(split, encodeFrame(FrameType.DATA, 0, 7, payload));
  });
});

describe('FrameDecoder', () => {
  const frames = sampleFrames();
  const wire = Buffer.concat(frames.map((f) => encodeFrame(f.type, f.flags, f.stream, f.payload)));

  test('decodes a stream of frames delivered all at once', () => {
    assert.deepEqual(decodeAll([wire]), frames);
  });

  test('decodes the same stream fed one byte at a time', () => {
    assert.deepEqual(decodeAll(pieces(wire, () => 1)), frames);
  });

  test('decodes the same stream in random-sized chunks', () => {
    for (const seed of [1, 2, 3]) {
      const random = prng(seed);
      const small = decodeAll(pieces(wire, () => 1 + Math.floor(random() * 13)));
      assert.deepEqual(small, frames, `seed ${seed}, chunks 1..13`);
      const large = decodeAll(pieces(wire, () => 1 + Math.floor(random() * 100_000)));
      assert.deepEqual(large, frames, `seed ${seed}, chunks 1..100000`);
    }
  });

  test('delivers whole frames inside one chunk as views, in order, synchronously', () => {
    const order: number[] = [];
    const decoder = new FrameDecoder((frame) => order.push(frame.stream));
    decoder.push(Buffer.concat([1, 2, 3].map((id) => encodeFrame(FrameType.DATA, 0, id, Buffer.from('x')))));
    assert.deepEqual(order, [1, 2, 3]);
  });

  test('holds a partial header and a partial payload until the rest arrives', () => {
    const bytes = encodeFrame(FrameType.DATA, 0, 5, Buffer.from('abcdef'));
    const seen: Frame[] = [];
    const decoder = new FrameDecoder((frame) => seen.push(frame));
    decoder.push(bytes.subarray(0, 4));
    assert.equal(decoder.bufferedBytes, 4);
    decoder.push(bytes.subarray(4, 12));
    assert.equal(decoder.bufferedBytes, 12);
    assert.equal(seen.length, 0);
    decoder.push(bytes.subarray(12));
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.payload.toString(), 'abcdef');
    assert.equal(decoder.bufferedBytes, 0);
  });

  test('a frame announcing more than MAX_FRAME_PAYLOAD throws ProtocolError', () => {
    const header = encodeHeader(FrameType.DATA, 0, 1, MAX_FRAME_PAYLOAD + 1);
    assert.throws(() => new FrameDecoder(() => undefined).push(header), ProtocolError);
    // Also when the oversized header itself arrives in pieces.
    const decoder = new FrameDecoder(() => undefined);
    decoder.push(header.subarray(0, 3));
    assert.throws(() => decoder.push(header.subarray(3)), ProtocolError);
  });

  test('a frame of exactly MAX_FRAME_PAYLOAD is accepted', () => {
    const payload = Buffer.alloc(MAX_FRAME_PAYLOAD, 7);
    const [frame] = decodeAll([encodeFrame(FrameType.DATA, 0, 1, payload)]);
    assert.equal(frame!.payload.length, MAX_FRAME_PAYLOAD);
  });

  test('a 3 MiB frame split into 1000 pieces decodes correctly', () => {
    const payload = randomBytes(3 * 1024 * 1024);
    const bytes = Buffer.concat([
      encodeFrame(FrameType.DATA, 0, 3, payload),
      encodeFrame(FrameType.DATA, FLAG_END, 3, Buffer.from('tail')),
    ]);
    const size = Math.ceil(bytes.length / 1000);
    const chunks = [...pieces(bytes, () => size)];
    assert.equal(chunks.length, 1000);
    const decoded = decodeAll(chunks);
    assert.equal(decoded.length, 2);
    assert.ok(decoded[0]!.payload.equals(payload), 'the 3 MiB payload survives');
    assert.equal(decoded[1]!.payload.toString(), 'tail');
    assert.equal(decoded[1]!.flags, FLAG_END);
  });
});

describe('FrameDecoder with streamData', () => {
  const frames = sampleFrames();
  const wire = Buffer.concat(frames.map((f) => encodeFrame(f.type, f.flags, f.stream, f.payload)));

  /** Decodes in streaming mode and joins consecutive DATA pieces back into frames. */
  function decodeStreaming(chunks: Iterable<Buffer>): Frame[] {
    const out: Frame[] = [];
    let open: { frame: Frame; parts: Buffer[]; total: number } | undefined;
    const decoder = new FrameDecoder(
      (frame) => {
        if (frame.type !== FrameType.DATA) {
          assert.equal(open, undefined, 'a DATA frame is finished before the next frame starts');
          out.push({ ...frame, payload: Buffer.from(frame.payload) });
          return;
        }
        open ??= { frame, parts: [], total: 0 };
        assert.equal(frame.stream, open.frame.stream);
        open.parts.push(Buffer.from(frame.payload));
        // A running total: with 1-byte chunks, summing the parts each time is quadratic.
        open.total += frame.payload.length;
        const total = open.total;
        const expected = frames[out.length]!;
        if (total < expected.payload.length) {
          assert.equal(frame.flags & FLAG_END, 0, 'FLAG_END only on the last piece');
          return;
        }
        out.push({ ...frame, payload: Buffer.concat(open.parts) });
        open = undefined;
      },
      { streamData: true },
    );
    for (const chunk of chunks) decoder.push(chunk);
    assert.equal(decoder.bufferedBytes, 0);
    return out;
  }

  test('DATA pieces join back into the same frames, whatever the chunk sizes', () => {
    assert.deepEqual(decodeStreaming([wire]), frames);
    assert.deepEqual(decodeStreaming(pieces(wire, () => 1)), frames);
    const random = prng(7);
    assert.deepEqual(decodeStreaming(pieces(wire, () => 1 + Math.floor(random() * 70_000))), frames);
  });

  test('a DATA frame split across two chunks is delivered as two views, nothing held', () => {
    const bytes = encodeFrame(FrameType.DATA, FLAG_END, 9, Buffer.from('abcdef'));
    const seen: Frame[] = [];
    const decoder = new FrameDecoder((frame) => seen.push(frame), { streamData: true });
    decoder.push(bytes.subarray(0, 13));
    assert.equal(decoder.bufferedBytes, 0);
    decoder.push(bytes.subarray(13));
    assert.deepEqual(
      seen.map((f) => [f.payload.toString(), f.flags]),
      [
        ['abc', 0],
        ['def', FLAG_END],
      ],
    );
  });
});
