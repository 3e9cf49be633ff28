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
 * `--http` (edge only) makes the edge do the HTTP/1.1 work described in floor-http-edge.ts.
 *
 *   node floor-relay.js edge [--busy-us N] [--http]                 prints `floor edge session <port> visitors <port>`
 *   node floor-relay.js agent <sessionPort> <originPort> [--busy-us N]   prints `floor agent connected`
 */
import net from 'node:net';
import { FrameBatcher, listen, readFrames, relayStream } from './floor-frames.js';
import type { HttpFloorVisitor } from './floor-http-edge.js';

async function runEdge(busyUs: number, http: boolean): Promise<void> {
  // Loaded only for --http, so that svc-server's V8 settings, which that module applies as an
  // edge doing HTTP work would run with, leave the bare floor as it always was.
  const httpEdge = http ? await import('./floor-http-edge.js') : undefined;
  const visitors = new Map<number, net.Socket>();
  const exchanges = new WeakMap<net.Socket, HttpFloorVisitor>();
  let session: FrameBatcher | undefined;
  let nextId = 1;
  const sessionServer = net.createServer((socket) => {
    socket.setNoDelay(true);
    session = new FrameBatcher(socket);
    readFrames(socket, busyUs, (id, payload) => {
      const visitor = visitors.get(id);
      if (!visitor) return;
      if (!payload) visitor.end();
      else if (httpEdge) exchanges.get(visitor)?.onAgentData(payload);
      else visitor.write(payload);
    });
  });
  const visitorServer = net.createServer((visitor) => {
    if (!session) return visitor.destroy();
    const id = nextId++;
    if (!httpEdge) return relayStream(visitor, id, visitors, session, busyUs);
    const exchange = new httpEdge.HttpFloorVisitor(visitor, id, session);
    exchanges.set(visitor, exchange);
    relayStream(visitor, id, visitors, session, busyUs, (chunk) => exchange.onVisitorData(chunk));
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
const httpAt = args.indexOf('--http');
const http = httpAt >= 0 && args.splice(httpAt, 1).length === 1;
const busyAt = args.indexOf('--busy-us');
// Half per chunk: a small GET is two chunks through each process.
const busyUs = busyAt >= 0 ? Number(args.splice(busyAt, 2)[1]) / 2 : 0;
const [role, ...ports] = args;
if (!Number.isFinite(busyUs) || busyUs < 0) {
  process.stderr.write('--busy-us needs a number of microseconds, 0 or more\n');
  process.exit(2);
} else if (role === 'edge' && ports.length === 0) await runEdge(busyUs, http);
else if (role === 'agent' && ports.length === 2) runAgent(Number(ports[0]), Number(ports[1]), busyUs);
else {
  process.stderr.write('usage: floor-relay.js edge [--busy-us N] [--http] | agent <sessionPort> <originPort> [--busy-us N]\n');
  process.exit(2);
}
