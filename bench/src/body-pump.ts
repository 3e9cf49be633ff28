// The bulk-body loop of the benchmark's clients and origin: one chunk reused for every write,
// so the process that writes costs as little as possible, and backpressure honoured.

/** A body being written: an HTTP/1.1 request or response, or an HTTP/2 stream. */
type Body = NodeJS.WritableStream & { once(event: 'drain', listener: () => void): unknown };

/** Upload chunk of the clients, reused for every write. */
export const UPLOAD_CHUNK = Buffer.alloc(64 * 1024, 'u');

/** Writes `bytes` of `chunk` (the last piece cut short) to `body` with backpressure, then ends it. */
export function pumpBody(body: Body, bytes: number, chunk: Buffer = UPLOAD_CHUNK): void {
  let sent = 0;
  const pump = (): void => {
    while (sent < bytes) {
      const piece = bytes - sent >= chunk.length ? chunk : chunk.subarray(0, bytes - sent);
      sent += piece.length;
      if (!body.write(piece)) return void body.once('drain', pump);
    }
    body.end();
  };
  pump();
}

/** Checks the origin's `{"length": n}` answer to an upload of `bytes`. */
export function checkUpload(status: number, body: string, bytes: number): Error | undefined {
  const length = status === 200 ? (JSON.parse(body) as { length: number }).length : -1;
  return length === bytes ? undefined : new Error(`upload answered ${status}: ${body.slice(0, 200)}`);
}
