/**
 * The floor for `--floor`: the least a chain of the tunnel's shape can cost in Node on this
 * machine. Two processes, `edge` and `agent`, relay visitor bytes over ONE TCP connection,
 * exactly where svc-server and svc sit (visitor → edge → session → agent → origin), and do
 * nothing else: no HTTP parsing or routing, no authentication, no flow control, no metering,
 * no inspector, no backpressure, no error handling worth the name. It is a measuring stick,
 * not a relay anyone should run.
 *
 * What it does keep is what any such chain must pay for: four loopback sockets per request
 * (visitor and origin reads and writes), the session's batched frames (flushed once per loop
 * turn in the check phase, as the real session does), Node's `net.Socket` per connection and
 * one origin connection per visitor connection.
 *
 * Frames: [stream id u32][length u32][bytes]; length 0 says the stream's connection closed.
 *
 * `--busy-us N` adds N µs of busy CPU per request to the process, half on each of the two
 * chunks a small GET brings it (request in, response back), standing in for work a real relay
 * does per request. Floors with added work show how throughput on this machine falls with the
 * relay processes' CPU per request, whatever that CPU is spent on.
 *
 *   node floor-relay.js edge [--busy-us N]                          prints `floor edge session <port> visitors <port>`
 *   node floor-relay.js agent <sessionPort> <originPort> [--busy-us N]   prints `floor agent connected`
 */
import net from 'node:net';

const HEADER_BYTES = 8;

/** Spins for `us` microseconds (no-op for 0): stand-in CPU work, per chunk relayed. */
function busy(us: number): void {
  if (us <= 0) return;
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
}

/** Frames written in one loop turn, handed to the socket as one buffer in the check phase. */
class FrameBatcher {
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
function readFrames(socket: net.Socket, busyUs: number, onFrame: (id: number, payload: Buffer | undefined) => void): void {
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
 * agent): listed under `id` while open, its chunks sent as frames, its close as an empty one.
 */
function relayStream(socket: net.Socket, id: number, streams: Map<number, net.Socket>, frames: FrameBatcher, busyUs: number): void {
  streams.set(id, socket);
  socket.setNoDelay(true);
  socket.on('data', (chunk: Buffer) => {
    busy(busyUs);
    frames.send(id, chunk);
  });
  socket.on('error', () => socket.destroy());
  socket.on('close', () => {
    streams.delete(id);
    frames.send(id, undefined);
  });
}

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

async function runEdge(busyUs: number): Promise<void> {
  const visitors = new Map<number, net.Socket>();
  let session: FrameBatcher | undefined;
  let nextId = 1;
  const sessionServer = net.createServer((socket) => {
    socket.setNoDelay(true);
    session = new FrameBatcher(socket);
    readFrames(socket, busyUs, (id, payload) => {
      const visitor = visitors.get(id);
      if (payload) visitor?.write(payload);
      else visitor?.end();
    });
  });
  const visitorServer = net.createServer((visitor) => {
    if (!session) return visitor.destroy();
    const id = nextId++;
    relayStream(visitor, id, visitors, session, busyUs);
  });
  const sessionPort = await listen(sessionServer);
  const visitorPort = await listen(visitorServer);
  process.stdout.write(`floor edge session ${sessionPort} visitors ${visitorPort}\n`);
}

function runAgent(sessionPort: number, originPort: number, busyUs: number): void {
  const origins = new Map<number, net.Socket>();
  const socket = net.connect(sessionPort, '127.0.0.1');
  socket.setNoDelay(true);
  const frames = new FrameBatcher(socket);
  readFrames(socket, busyUs, (id, payload) => {
    let origin = origins.get(id);
    if (!payload) {
      origin?.end();
      return;
    }
    if (!origin) {
      origin = net.connect(originPort, '127.0.0.1');
      relayStream(origin, id, origins, frames, busyUs);
    }
    origin.write(payload);
  });
  socket.on('connect', () => process.stdout.write('floor agent connected\n'));
  socket.on('close', () => process.exit(0));
}

const args = process.argv.slice(2);
const busyAt = args.indexOf('--busy-us');
// Half per chunk: a small GET is two chunks through each process.
const busyUs = busyAt >= 0 ? Number(args.splice(busyAt, 2)[1]) / 2 : 0;
const [role, ...ports] = args;
if (!Number.isFinite(busyUs) || busyUs < 0) {
  process.stderr.write('--busy-us needs a number of microseconds, 0 or more\n');
  process.exit(2);
} else if (role === 'edge' && ports.length === 0) await runEdge(busyUs);
else if (role === 'agent' && ports.length === 2) runAgent(Number(ports[0]), Number(ports[1]), busyUs);
else {
  process.stderr.write('usage: floor-relay.js edge [--busy-us N] | agent <sessionPort> <originPort> [--busy-us N]\n');
  process.exit(2);
}
