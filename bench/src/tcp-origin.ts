import { once } from 'node:events';
import net, { type Server, type Socket } from 'node:net';

/**
 * The local TCP service of the TCP rows: one port, and the first byte of a connection says what
 * it wants, so one `svc tcp` tunnel and one `ssh -L` forward carry every workload.
 *
 * - `d` + 8 bytes (big-endian length): the service sends that many bytes, then ends (download).
 * - `u`: the service reads to the client's end, then answers the count as 8 bytes and ends (upload).
 * - anything else: echo, that first byte included (connections per second, round trips).
 */
export const TCP_DOWNLOAD = 0x64; // 'd'
export const TCP_UPLOAD = 0x75; // 'u'
export const TCP_ECHO = 0x65; // 'e'

/** What the service writes at a time: large, so the source is never what limits a download. */
const SOURCE_CHUNK = Buffer.alloc(256 * 1024, 0x5a);

export interface TcpOrigin {
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** Starts the service on a loopback port (0: any free one). */
export async function startTcpOrigin(port = 0): Promise<TcpOrigin> {
  const sockets = new Set<Socket>();
  const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    serve(socket);
  });
  server.listen({ port, host: '127.0.0.1', backlog: 4096 });
  await once(server, 'listening');
  return {
    port: (server.address() as net.AddressInfo).port,
    server,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Reads the command byte (and a download's length), then hands the socket to its mode. */
function serve(socket: Socket): void {
  let head: Buffer = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
    const command = head[0];
    if (command === TCP_DOWNLOAD) {
      if (head.length < 9) return;
      socket.off('data', onData);
      source(socket, Number(head.readBigUInt64BE(1)));
    } else if (command === TCP_UPLOAD) {
      socket.off('data', onData);
      sink(socket, head.length - 1);
    } else {
      socket.off('data', onData);
      socket.write(head);
      socket.pipe(socket);
    }
  };
  socket.on('data', onData);
}

/** Writes `bytes` with backpressure, then ends. */
function source(socket: Socket, bytes: number): void {
  let left = bytes;
  const pump = (): void => {
    while (left > 0) {
      const chunk = left >= SOURCE_CHUNK.length ? SOURCE_CHUNK : SOURCE_CHUNK.subarray(0, left);
      left -= chunk.length;
      if (!socket.write(chunk)) {
        socket.once('drain', pump);
        return;
      }
    }
    socket.end();
  };
  pump();
}

/** Counts bytes to the client's end, then answers the count. */
function sink(socket: Socket, already: number): void {
  let received = already;
  socket.on('data', (chunk: Buffer) => (received += chunk.length));
  socket.once('end', () => {
    const answer = Buffer.alloc(8);
    answer.writeBigUInt64BE(BigInt(received));
    socket.end(answer);
  });
}
