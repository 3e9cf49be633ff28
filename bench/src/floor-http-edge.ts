/**
 * The `--http` floor edge: the bare floor's edge (floor-relay.ts) plus the HTTP/1.1 work an edge
 * in front of an agent that only moves bytes would still have to do per request, using
 * svcRouter's own code for each step:
 * - the visitor's head read by the lean path's strict reader (server/edge/lean/request-head);
 * - the head sent on rebuilt with the edge's forwarding rules (server/edge/forwarding `requestHead`:
 *   hop-by-hop headers out, X-Forwarded-* in) and serialised as the agent serialises it for the
 *   origin (sdk/h1-request `frameRequest`);
 * - the origin's response read by the agent's incremental parser (sdk/h1-response-parser) and
 *   its head rewritten for the visitor as the lean path does (`responseHeaders`,
 *   `visitorResponseHead`), the body passed on, chunked when the origin gave no length.
 *
 * The stream is the visitor's connection, not its request: the agent side is the floor's bare
 * agent, which opens one origin connection per stream and relays bytes, so no HTTP work is done
 * there at all. Still left out, as in the bare floor: routing, authentication, per-stream flow
 * control, metering and the Traffic Inspector. What this measures is the least a byte-only
 * agent design could cost, not a design anyone could ship as is: one request in flight per
 * connection (no pipelining), and no error pages. The process runs with svc-server's V8
 * settings, as such an edge would.
 */
// First, as in svc-server's main: the V8 settings the real edge runs with (see v8-tuning.ts).
import '@svcrouter/server/v8-tuning';
import type net from 'node:net';
import { frameRequest, LAST_CHUNK, ResponseParser, writeChunk, type ResponseHandler } from '@svcrouter/sdk/bench';
import {
  BodyFraming,
  HAND_OVER,
  INCOMPLETE,
  MAX_HEADER_BYTES,
  readRequestHead,
  requestHead,
  responseHeaders,
  visitorResponseHead,
  type VisitorResponseHead,
} from '@svcrouter/server/bench';
import type { FrameBatcher } from './floor-frames.js';

/** One visitor connection: its requests go out as HTTP/1.1 bytes on its stream, the responses come back the same way. */
export class HttpFloorVisitor implements ResponseHandler {
  private held: Buffer | undefined;
  /** The method of the request whose response is awaited, or '' between requests. */
  private method = '';
  private response: VisitorResponseHead | undefined;
  private readonly parser = new ResponseParser();

  constructor(
    private readonly socket: net.Socket,
    private readonly id: number,
    private readonly frames: FrameBatcher,
  ) {}

  /** Bytes from the visitor: each whole head becomes a request on the stream. */
  onVisitorData(chunk: Buffer): void {
    const buffer = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    let offset = 0;
    while (offset < buffer.length) {
      const request = readRequestHead(buffer, offset, MAX_HEADER_BYTES);
      if (request === INCOMPLETE) break;
      if (request === HAND_OVER || this.method !== '') return void this.socket.destroy();
      offset += request.headBytes;
      const address = this.socket.remoteAddress ?? '';
      const head = requestHead(
        { rawHeaders: request.rawHeaders, method: request.method, url: request.target },
        { tunnelId: 'floor', host: request.host, ip: address, secure: false, kind: 'request', body: false, absolute: undefined },
      );
      this.frames.send(this.id, Buffer.from(frameRequest(head).head, 'latin1'));
      this.method = request.method;
      this.parser.reset(this, request.method === 'HEAD');
    }
    this.held = offset < buffer.length ? buffer.subarray(offset) : undefined;
  }

  /** Bytes from the origin, through the agent: parsed, and written to the visitor in one corked write. */
  onAgentData(payload: Buffer): void {
    this.socket.cork();
    try {
      this.parser.push(payload);
    } catch {
      this.socket.destroy();
    }
    this.socket.uncork();
  }

  onResponseHead(status: number, headers: string[]): void {
    this.response = visitorResponseHead(status, responseHeaders(headers), this.method, true);
    if (!this.response) return void this.socket.destroy();
    this.socket.write(this.response.text, 'latin1');
  }

  onResponseBody(chunk: Buffer): void {
    if (this.response?.framing === BodyFraming.CHUNKED) writeChunk(this.socket, chunk);
    else this.socket.write(chunk);
  }

  onResponseComplete(): void {
    if (this.response?.framing === BodyFraming.CHUNKED) this.socket.write(LAST_CHUNK, 'latin1');
    this.method = '';
    this.response = undefined;
  }
}
