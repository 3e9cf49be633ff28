import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { FrameDecoder, FrameType, type Frame } from './frame.js';
import { COALESCE_BELOW, FrameWriter } from './frame-writer.js';

/** A socket stand-in that keeps each buffer written and a copy of it as it was at write time. */
function recordingSocket() {
  const written: Array<{ chunk: Buffer; copy: Buffer }> = [];
  return {
    written,
    write(chunk: Buffer): boolean {
      written.push({ chunk, copy: Buffer.from(chunk) });
      return true;
    },
  };
}

function decodeAll(chunks: Buffer[]): Frame[] {
  const frames: Frame[] = [];
  const decoder = new FrameDecoder((frame) => frames.push({ ...frame, payload: Buffer.from(frame.payload) }));
  for (const chunk of chunks) decoder.push(chunk);
  return frames;
}

test('frames of every size come out in order, small ones batched per flush, and written bytes never change', () => {
  const socket = recordingSocket();
  const writer = new FrameWriter(socket);
  const expected: Array<{ type: number; stream: number; payload: Buffer }> = [];
  const large = randomBytes(COALESCE_BELOW + 1);
  // Enough small frames to roll over several 64 KiB slabs, with flushes and large payloads between.
  for (let i = 0; i < 3000; i++) {
    const small = randomBytes(i % 97);
    writer.frame(FrameType.DATA, 0, 2 * i + 1, small);
    expected.push({ type: FrameType.DATA, stream: 2 * i + 1, payload: small });
    const text = `{"n":${i},"s":"é€😀"}`;
    writer.textFrame(FrameType.HEADERS, 0, 2 * i + 1, text);
    expected.push({ type: FrameType.HEADERS, stream: 2 * i + 1, payload: Buffer.from(text) });
    if (i % 500 === 0) {
      writer.frame(FrameType.DATA, 0, 2 * i + 1, large);
      expected.push({ type: FrameType.DATA, stream: 2 * i + 1, payload: large });
    }
    if (i % 7 === 0) writer.flush();
  }
  writer.flush();
  assert.equal(writer.pendingBytes, 0);
  assert.ok(socket.written.length < 3000, `${socket.written.length} writes for 6000+ frames`);
  for (const { chunk, copy } of socket.written) assert.ok(chunk.equals(copy), 'a buffer changed after it was written');
  assert.ok(
    socket.written.some(({ chunk }) => chunk === large),
    'a large payload is written by reference',
  );
  const frames = decodeAll(socket.written.map(({ chunk }) => chunk));
  assert.equal(frames.length, expected.length);
  frames.forEach((frame, i) => {
    assert.equal(frame.type, expected[i]!.type);
    assert.equal(frame.stream, expected[i]!.stream);
    assert.ok(frame.payload.equals(expected[i]!.payload), `payload of frame ${i}`);
  });
});

test('long text goes out as its own buffer, with its exact UTF-8 length', () => {
  const socket = recordingSocket();
  const writer = new FrameWriter(socket);
  const text = 'ü'.repeat(COALESCE_BELOW);
  writer.textFrame(FrameType.CONTROL, 0, 0, text);
  writer.flush();
  const [frame] = decodeAll(socket.written.map(({ chunk }) => chunk));
  assert.equal(frame!.payload.toString('utf8'), text);
  assert.equal(frame!.payload.length, Buffer.byteLength(text));
});
