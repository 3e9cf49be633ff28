import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net, { type AddressInfo, type Server, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import type { CallbackStream } from './callback-stream.js';
import { SocketPipe, type SocketPipeHooks } from './socket-pipe.js';
import { collect, muxPair, sha256, type MuxPair } from './test-support.js';

/** A small tunnel: visitor → listener → SocketPipe (acceptor) → mux → SocketPipe (dialer) → local service. */
interface Tunnel {
  /** The visitor's address. */
  port: number;
  /** The visitor-side stream of the latest connection, once accepted. */
  edgeStream?: CallbackStream;
  /** The visitor-side socket of the latest connection, as the relay holds it. */
  edgeSocket?: Socket;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

async function tunnel(service: (socket: Socket) => void, options: { window?: number; edgeHooks?: SocketPipeHooks } = {}): Promise<Tunnel> {
  const local = net.createServer({ allowHalfOpen: true }, service);
  const localPort = await listen(local);
  const pair: MuxPair = await muxPair('tcp', {
    window: options.window,
    dialer: {
      onStream(stream) {
        const socket = net.connect({ port: localPort, host: '127.0.0.1', allowHalfOpen: true });
        const pipe = new SocketPipe(socket, stream);
        socket.once('connect', () => pipe.start());
        socket.on('error', () => stream.reset('UPSTREAM_ERROR'));
      },
    },
  });
  const result: Tunnel = { port: 0, close: () => Promise.resolve() };
  const edge = net.createServer({ allowHalfOpen: true }, (socket) => {
    const stream = pair.acceptor.open({ m: 'TCP' });
    result.edgeStream = stream;
    result.edgeSocket = socket;
    const pipe = new SocketPipe(socket, stream, options.edgeHooks);
    pipe.start();
    socket.on('error', () => stream.reset('CANCEL'));
    socket.on('close', () => {
      if (!pipe.cleanlyEnded) stream.reset('CANCEL');
    });
  });
  result.port = await listen(edge);
  result.close = async () => {
    await pair.close();
    await Promise.all([new Promise((resolve) => edge.close(resolve)), new Promise((resolve) => local.close(resolve))]);
  };
  return result;
}

function connect(port: number): Socket {
  return net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
}

/** Resolves once `condition` holds, checked every loop turn (the state it waits for comes from I/O). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('SocketPipe: a socket carried over a mux stream with callbacks', () => {
  const tunnels: Tunnel[] = [];
  after(() => Promise.all(tunnels.map((t) => t.close())));

  test('bytes cross both ways intact, and each direction ends on its own (half-close)', async () => {
    const upload = randomBytes(3 * 1024 * 1024 + 17);
    const download = randomBytes(2 * 1024 * 1024 + 5);
    let received = '';
    const t = await tunnel((socket) => {
      // Answers only once the visitor's FIN arrived: the visitor's write side is closed, its read side is not.
      void collect(socket).then((data) => {
        received = sha256(data);
        socket.end(download);
      });
    });
    tunnels.push(t);
    const visitor = connect(t.port);
    const reply = collect(visitor);
    visitor.end(upload);
    assert.equal(sha256(await reply), sha256(download));
    assert.equal(received, sha256(upload));
    await once(visitor, 'close');
    await until(() => t.edgeStream!.closed);
    assert.equal(t.edgeStream!.resetCode, undefined);
  });

  test('a visitor that does not read holds the relay to the window and one socket budget, then gets every byte', async () => {
    const window = 256 * 1024;
    const total = 32 * 1024 * 1024;
    const data = randomBytes(total);
    let blocked = false;
    const t = await tunnel(
      (socket) => {
        let offset = 0;
        const pump = (): void => {
          while (offset < total) {
            const chunk = data.subarray(offset, offset + 64 * 1024);
            offset += chunk.length;
            if (!socket.write(chunk)) {
              blocked = true;
              socket.once('drain', pump);
              return;
            }
          }
          socket.end();
        };
        pump();
      },
      { window },
    );
    tunnels.push(t);
    const visitor = connect(t.port);
    visitor.pause();
    // The stream's window full: the relay stopped taking bytes because the visitor's socket is full.
    await until(() => t.edgeStream !== undefined && t.edgeStream.receiveBuffered >= window);
    assert.equal(blocked, true);
    assert.ok(t.edgeStream!.receiveBuffered <= window);
    // The budget, plus at most the piece that crossed it.
    assert.ok(t.edgeSocket!.writableLength <= 128 * 1024, `visitor socket holds ${t.edgeSocket!.writableLength} bytes`);
    const got = collect(visitor);
    visitor.resume();
    assert.equal(sha256(await got), sha256(data));
  });

  test('a reset from the other side destroys the socket', async () => {
    const t = await tunnel((socket) => socket.resetAndDestroy());
    tunnels.push(t);
    const visitor = connect(t.port);
    visitor.on('error', () => undefined);
    visitor.on('end', () => visitor.end());
    visitor.resume();
    await once(visitor, 'close');
    await until(() => t.edgeStream!.closed);
    assert.notEqual(t.edgeStream!.resetCode, undefined);
  });

  test('a hook that returns false drops the chunk (the owner cut the connection)', async () => {
    let seen = 0;
    let ended = false;
    const t = await tunnel(
      (socket) => {
        socket.on('data', (chunk: Buffer) => (seen += chunk.length));
        socket.on('end', () => {
          ended = true;
          socket.end();
        });
      },
      { edgeHooks: { fromSocket: () => false } },
    );
    tunnels.push(t);
    const visitor = connect(t.port);
    visitor.resume();
    // The FIN follows the bytes on the same connection: once the service has it, the bytes were dropped, not late.
    visitor.end('never forwarded');
    await once(visitor, 'close');
    assert.equal(ended, true);
    assert.equal(seen, 0);
    visitor.destroy();
  });
});
