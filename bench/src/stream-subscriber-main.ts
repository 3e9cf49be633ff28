/**
 * Entry of the benchmark's live-stream subscriber (`node bench/dist/stream-subscriber-main.js
 * <edgeHttpPort> <token>`): one GET /v1/requests/stream, read to the end the way an open
 * dashboard reads it, in its own process so that its CPU is measured apart from the edge's and
 * never runs on the load generator's event loop. Driven over IPC:
 * - `open`: subscribes; resolves once the stream's first bytes arrived;
 * - `counts`: {events, dropped} so far (request events received, records it was told it missed);
 * - `close`: ends the stream.
 * Counting scans the bytes for the event names rather than decoding every event: the figure is
 * the server's cost, and a parser here would only take CPU from the processes under test.
 */
import http from 'node:http';
import { serveIpc } from './ipc.js';

const [port = '0', token = ''] = process.argv.slice(2);
const REQUEST_EVENT = Buffer.from('event: request\n');
const DROPPED_EVENT = /^event: dropped\ndata: (.*)$/gm;

let events = 0;
let dropped = 0;
let req: http.ClientRequest | undefined;

/** Occurrences of `needle` in `chunk` (an event name never straddles chunks in practice; a miss only undercounts). */
function occurrences(chunk: Buffer, needle: Buffer): number {
  let count = 0;
  for (let at = chunk.indexOf(needle); at >= 0; at = chunk.indexOf(needle, at + needle.length)) count++;
  return count;
}

function open(): Promise<boolean> {
  return new Promise((resolve, reject) => {
    req = http.get(
      {
        host: '127.0.0.1',
        port: Number(port),
        path: '/v1/requests/stream',
        headers: { host: `localhost:${port}`, authorization: `Bearer ${token}` },
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`the request stream answered ${res.statusCode}`));
        res.once('data', () => resolve(true));
        res.on('data', (chunk: Buffer) => {
          events += occurrences(chunk, REQUEST_EVENT);
          // Rare (only after a stall): decoded in full.
          if (chunk.includes('event: dropped')) {
            for (const match of chunk.toString('utf8').matchAll(DROPPED_EVENT))
              dropped += (JSON.parse(match[1]!) as { dropped: number }).dropped;
          }
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', reject);
  });
}

serveIpc({
  open: () => open(),
  counts: () => ({ events, dropped }),
  close() {
    req?.destroy();
    req = undefined;
    return true;
  },
});
