import { HeadBuffer, MAX_HEAD_BYTES } from './h1-head-buffer.js';
import { HeadMemo, type SharedHead } from './h1-head-memo.js';
import { ResponseParseError, isControl, readHead, type ResponseHeadInfo } from './h1-response-head.js';

export { MAX_HEAD_BYTES, ResponseParseError, type SharedHead };

/** Longest chunk-size line, extensions included; they are skipped, but not forever. */
const MAX_CHUNK_LINE_BYTES = 4096;
/** Largest chunk size: far beyond any real chunk, and small enough that the arithmetic stays exact. */
const MAX_CHUNK_SIZE = 2 ** 48;

const CR = 13;
const LF = 10;

/** Where the parser is in the current response. */
const enum State {
  Head,
  LengthBody,
  CloseBody,
  ChunkSize,
  ChunkExtension,
  ChunkSizeLF,
  ChunkData,
  ChunkDataCR,
  ChunkDataLF,
  TrailerLineStart,
  TrailerLine,
  TrailerLF,
  TrailerEndLF,
  Done,
}

/** Receives one response as it is parsed. */
export interface ResponseHandler {
  /** An interim (1xx) head: 100 Continue, 103 Early Hints…; zero or more before the final head. */
  onInterimHead?(status: number, headers: string[]): void;
  /**
   * The final response head; called once, before any body. `shared` is set when the head is
   * kept for later responses on the connection that repeat it byte for byte: `headers` is then
   * that head's array, shared with those responses (copy it before editing), and
   * `shared.encoded` a slot for what the handler derives from the head alone.
   */
  onResponseHead(status: number, headers: string[], shared?: SharedHead): void;
  /** A piece of the de-chunked body: a view into the socket's chunk, not a copy. */
  onResponseBody(chunk: Buffer): void;
  /**
   * The trailer section of a chunked body, as flat [name, value…] pairs as the origin sent them
   * (unchecked); called just before onResponseComplete, only when there was one.
   */
  onResponseTrailers?(fields: string[]): void;
  /** The response is complete; the parser has stopped and reads nothing more. */
  onResponseComplete(): void;
}

/**
 * Incremental, strict HTTP/1.x response parser for one connection, reused for each response
 * on it (`reset`). Bytes go in with `push` in chunks split anywhere; the handler is called
 * synchronously from `push`, and may `detach` the parser from inside any callback, after
 * which `push` returns at once. Malformed input throws ResponseParseError.
 */
export class ResponseParser {
  /** Whether the connection may carry another request once this response is complete. */
  keepAlive = false;
  /** Bytes that arrived after the complete response (a broken origin): the connection is unusable. */
  extraBytes = false;
  /** Bytes received for this response so far, interim responses included. */
  received = 0;
  private handler: ResponseHandler | undefined;
  private noBody = false;
  private state = State.Done;
  private readonly head = new HeadBuffer();
  /** The connection's last final head, to skip reading it again when the next one repeats it. */
  private readonly memo = new HeadMemo();
  /** Bytes left in the current Content-Length body or chunk. */
  private remaining = 0;
  /** Bytes of the chunk-size line or of the trailers read so far, against their limits. */
  private lineBytes = 0;
  /** The trailer line being read, and the complete ones (latin1, one char per byte); rare, so kept simple. */
  private trailerLine = '';
  private trailerLines: string[] | undefined;

  /** Prepares for the next response; `noBody` for a HEAD request. */
  reset(handler: ResponseHandler, noBody: boolean): void {
    this.handler = handler;
    this.noBody = noBody;
    this.state = State.Head;
    this.keepAlive = false;
    this.extraBytes = false;
    this.received = 0;
    this.head.clear();
    this.remaining = 0;
    this.lineBytes = 0;
    this.trailerLine = '';
    this.trailerLines = undefined;
  }

  /** Stops calling the handler; later bytes are ignored. */
  detach(): void {
    this.handler = undefined;
    this.state = State.Done;
    this.head.clear();
  }

  /** Whether the response is complete (or the parser is idle). */
  get complete(): boolean {
    return this.state === State.Done;
  }

  /** Parses one chunk from the socket. */
  push(chunk: Buffer): void {
    const handler = this.handler;
    if (handler === undefined) {
      if (chunk.length > 0) this.extraBytes = true;
      return;
    }
    this.received += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      if (this.state === State.Head) {
        offset = this.pushHead(chunk, offset, handler);
        continue;
      }
      if (this.state === State.LengthBody || this.state === State.ChunkData) {
        const end = Math.min(chunk.length, offset + this.remaining);
        this.remaining -= end - offset;
        const piece = offset === 0 && end === chunk.length ? chunk : chunk.subarray(offset, end);
        offset = end;
        handler.onResponseBody(piece);
        if (this.handler !== handler) return;
        if (this.remaining === 0) {
          if (this.state === State.ChunkData) this.state = State.ChunkDataCR;
          else return this.finish(handler, chunk.length - offset);
        }
        continue;
      }
      if (this.state === State.CloseBody) {
        handler.onResponseBody(offset === 0 ? chunk : chunk.subarray(offset));
        return;
      }
      offset = this.pushChunkedFraming(chunk, offset);
      if (this.state === State.Done) return this.finish(handler, chunk.length - offset);
    }
  }

  /**
   * The origin closed its side. Returns true when that ended the response (a body delimited by
   * the close), false when the response was cut short or never came.
   */
  end(): boolean {
    const handler = this.handler;
    if (handler === undefined || this.state !== State.CloseBody) return false;
    this.finish(handler, 0);
    return true;
  }

  /** Consumes head bytes from `offset`; returns the offset after what it used. */
  private pushHead(chunk: Buffer, offset: number, handler: ResponseHandler): number {
    const headEnd = this.head.scan(chunk, offset);
    if (headEnd < 0) return chunk.length;
    // A head in one chunk may repeat the last one; a split head is rare and read as it is.
    const whole = !this.head.holding;
    let shared = whole ? this.memo.match(chunk, offset, headEnd) : undefined;
    let info: ResponseHeadInfo;
    if (shared !== undefined) info = shared.info;
    else {
      info = readHead(this.head.take(chunk, offset, headEnd));
      if (info.status < 200) {
        if (info.status === 101) throw new ResponseParseError('101 switching protocols to a request that asked for no upgrade');
        // Interim (100 Continue, 103 Early Hints): the real head follows.
        handler.onInterimHead?.(info.status, info.headers);
        return this.handler === handler ? headEnd : chunk.length;
      }
      if (whole) shared = this.memo.remember(chunk, offset, headEnd, info);
    }
    this.startBody(info);
    handler.onResponseHead(info.status, info.headers, shared);
    if (this.handler !== handler) return chunk.length;
    if (this.state === State.Done) {
      this.finish(handler, chunk.length - headEnd);
      return chunk.length;
    }
    return headEnd;
  }

  /** Chooses the body framing from the final head (RFC 9112 §6.3). */
  private startBody(info: ResponseHeadInfo): void {
    this.keepAlive = info.keepAlive;
    if (this.noBody || info.status === 204 || info.status === 304) {
      this.state = State.Done;
      // Framing headers on a bodiless response still say how the origin frames messages;
      // one that sends both cannot be trusted with the next request.
      if (info.chunked !== undefined && info.contentLength !== undefined) this.keepAlive = false;
      return;
    }
    if (info.chunked !== undefined) {
      // Both framings present: a smuggling pattern. Chunked wins, the connection is not reused.
      if (info.contentLength !== undefined) this.keepAlive = false;
      if (info.chunked) {
        this.state = State.ChunkSize;
        this.remaining = 0;
        this.lineBytes = 0;
      } else {
        this.state = State.CloseBody;
        this.keepAlive = false;
      }
    } else if (info.contentLength !== undefined) {
      this.remaining = info.contentLength;
      this.state = info.contentLength === 0 ? State.Done : State.LengthBody;
    } else {
      this.state = State.CloseBody;
      this.keepAlive = false;
    }
  }

  /** Walks chunk-size lines, chunk delimiters and trailers; returns the next offset. */
  private pushChunkedFraming(chunk: Buffer, offset: number): number {
    for (; offset < chunk.length; offset++) {
      const c = chunk[offset]!;
      switch (this.state) {
        case State.ChunkSize: {
          const digit = hexValue(c);
          this.lineBytes++;
          if (digit >= 0) {
            this.remaining = this.remaining * 16 + digit;
            if (this.remaining > MAX_CHUNK_SIZE) throw new ResponseParseError('chunk size too large');
            continue;
          }
          if (this.lineBytes === 1) throw new ResponseParseError('invalid chunk size');
          if (c === CR) this.state = State.ChunkSizeLF;
          else if (c === 0x3b || c === 0x20 || c === 0x09)
            this.state = State.ChunkExtension; // ; SP HTAB
          else throw new ResponseParseError('invalid chunk size');
          continue;
        }
        case State.ChunkExtension:
          // Extensions mean nothing to us; skip them, but no control bytes and not unbounded.
          if (++this.lineBytes > MAX_CHUNK_LINE_BYTES) throw new ResponseParseError('chunk extension too long');
          if (c === CR) this.state = State.ChunkSizeLF;
          else if (isControl(c)) throw new ResponseParseError('invalid chunk extension');
          continue;
        case State.ChunkSizeLF:
          if (c !== LF) throw new ResponseParseError('chunk size line not ended by CRLF');
          this.lineBytes = 0;
          if (this.remaining === 0) {
            this.state = State.TrailerLineStart;
            continue;
          }
          this.state = State.ChunkData;
          return offset + 1;
        case State.ChunkDataCR:
          if (c !== CR) throw new ResponseParseError('chunk data not followed by CRLF');
          this.state = State.ChunkDataLF;
          continue;
        case State.ChunkDataLF:
          if (c !== LF) throw new ResponseParseError('chunk data not followed by CRLF');
          this.state = State.ChunkSize;
          continue;
        case State.TrailerLineStart:
        case State.TrailerLine:
          if (++this.lineBytes > MAX_HEAD_BYTES) throw new ResponseParseError('trailers too large');
          if (c === CR) this.state = this.state === State.TrailerLineStart ? State.TrailerEndLF : State.TrailerLF;
          else if (isControl(c)) throw new ResponseParseError('invalid trailer');
          else {
            this.trailerLine += String.fromCharCode(c);
            this.state = State.TrailerLine;
          }
          continue;
        case State.TrailerLF:
          if (c !== LF) throw new ResponseParseError('trailer not ended by CRLF');
          (this.trailerLines ??= []).push(this.trailerLine);
          this.trailerLine = '';
          this.state = State.TrailerLineStart;
          continue;
        case State.TrailerEndLF:
          if (c !== LF) throw new ResponseParseError('trailers not ended by CRLF');
          this.state = State.Done;
          return offset + 1;
        default:
          return offset; // a body state: the caller slices it
      }
    }
    return offset;
  }

  /** Ends the response; `leftover` bytes after it mean the origin sent more than one response. */
  private finish(handler: ResponseHandler, leftover: number): void {
    this.state = State.Done;
    this.handler = undefined;
    if (leftover > 0) this.extraBytes = true;
    const lines = this.trailerLines;
    if (lines !== undefined) {
      this.trailerLines = undefined;
      handler.onResponseTrailers?.(trailerPairs(lines));
    }
    handler.onResponseComplete();
  }
}

/** `name: value` lines as flat pairs, value without its surrounding whitespace; lines without a colon are skipped. */
function trailerPairs(lines: string[]): string[] {
  const pairs: string[] = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    pairs.push(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return pairs;
}

/** 0-15 for a hex digit, -1 otherwise. */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}
