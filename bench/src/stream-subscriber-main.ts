/**
 * Entry of the benchmark's live-stream subscriber (`node bench/dist/stream-subscriber-main.js
 * <edgeHttpPort> <token>`): one GET /v1/requests/stream, read to the end the way an open
 * dashboard reads it, in its own process so that its CPU is measured apart from the edge's and
 * never runs on the load generator's event loop. Driven over IPC:
 * - `open`: subscribes; resolves once the stream's first bytes arrived;
 * - `counts`: {events, dropped} so far (request events received, records it was told it missed);
 * - `close`: ends the stream.
 * A dashboard runs on another machine; this one shares the benchmark's cores with the edge,
 * agent, origin and load generator, so it reads as cheaply as a faithful reader can: a plain
 * socket reading into one reused buffer (no Buffer per read) and counting event names in the
 * bytes (sse-counter.ts) rather than parsing HTTP and every event.
 */
import net from 'node:net';
import { serveIpc } from './ipc.js';
import { SseEventCounter } from './sse-counter.js';

const [port = '0', token = ''] = process.argv.slice(2);
const READ_BUFFER_BYTES = 256 * 1024;

const counter = new SseEventCounter();
let socket: net.Socket | undefined;

function open(): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    let head = '';
    let opened = false;
    const onRead = (length: number): boolean => {
      if (opened) {
        counter.feedBytes(buffer.subarray(0, length));
        return true;
      }
      head += buffer.toString('latin1', 0, length);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return true;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1];
      if (status !== '200') {
        reject(new Error(`the request stream answered ${status ?? JSON.stringify(head.slice(0, 80))}`));
        socket?.destroy();
        return false;
      }
      opened = true;
      // The body is chunked: the chunk-size lines sit between the edge's writes, each of which
      // holds whole events, so they never split an event name.
      counter.feed(head.slice(end + 4));
      resolve(true);
      return true;
    };
    socket = net.connect({ host: '127.0.0.1', port: Number(port), onread: { buffer, callback: onRead } }, () => {
      socket!.write(
        `GET /v1/requests/stream HTTP/1.1\r\nhost: localhost:${port}\r\nauthorization: Bearer ${token}\r\naccept: text/event-stream\r\n\r\n`,
      );
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error('the request stream closed before it opened')));
  });
}

serveIpc({
  open: () => open(),
  counts: () => ({ events: counter.events, dropped: counter.dropped }),
  close() {
    socket?.destroy();
    socket = undefined;
    return true;
  },
});
