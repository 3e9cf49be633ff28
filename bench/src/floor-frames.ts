/**
 * The frame plumbing both floor edges and the floor agent share (see floor-relay.ts): frames of
 * [stream id u32][length u32][bytes], batched per loop turn, and the stand-in busy work.
 */
import type net from 'node:net';

const HEADER_BYTES = 8;

/** Spins for `us` microseconds (no-op for 0): stand-in CPU work, per chunk relayed. */
export function busy(us: number): void {
  if (us <= 0) return;
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
}

/** Frames written in one loop turn, handed to the socket as one buffer in the check phase. */
export class FrameBatcher {
  private pending: Buffer[] = [];
  private scheduled = false;

  constructor(private readonly socket: net.Socket) {}

  send(id: number, data: Buffer | undefined): void {
    const header = Buffer.allocUnsafe(HEADER_BYTES);
    header.writeUInt32BE(id, 0);
    header.writeUInt32BE(data?.length ?? 0, 4);
    this.pending.push(header);
    if (data) this.pending.push(data);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    this.socket.write(batch.length === 1 ? batch[0]! : Buffer.concat(batch));
  }
}

/** Calls `onFrame` for every whole frame read from `socket`, keeping a partial one for the next read. */
export function readFrames(socket: net.Socket, busyUs: number, onFrame: (id: number, payload: Buffer | undefined) => void): void {
  let held: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    const buffer = held.length > 0 ? Buffer.concat([held, chunk]) : chunk;
    let offset = 0;
    while (buffer.length - offset >= HEADER_BYTES) {
      const id = buffer.readUInt32BE(offset);
      const length = buffer.readUInt32BE(offset + 4);
      if (buffer.length - offset - HEADER_BYTES < length) break;
      const start = offset + HEADER_BYTES;
      busy(busyUs);
      onFrame(id, length === 0 ? undefined : buffer.subarray(start, start + length));
      offset = start + length;
    }
    held = buffer.subarray(offset);
  });
}

/**
 * One stream's socket on either side (a visitor at the edge, an origin connection at the
 * agent): listed under `id` while open, its chunks sent as frames (or given to `onChunk`, which
 * sends what it makes of them), its close as an empty frame.
 */
export function relayStream(
  socket: net.Socket,
  id: number,
  streams: Map<number, net.Socket>,
  frames: FrameBatcher,
  busyUs: number,
  onChunk: (chunk: Buffer) => void = (chunk) => frames.send(id, chunk),
): void {
  streams.set(id, socket);
  socket.setNoDelay(true);
  socket.on('data', (chunk: Buffer) => {
    busy(busyUs);
    onChunk(chunk);
  });
  socket.on('error', () => socket.destroy());
  socket.on('close', () => {
    streams.delete(id);
    frames.send(id, undefined);
  });
}

export function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}
