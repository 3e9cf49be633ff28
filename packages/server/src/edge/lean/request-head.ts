/**
 * A strict reader for the one request shape that dominates tunnel traffic: an HTTP/1.1 request
 * with no body, whose whole head is in hand. Everything else (bodies, upgrades, `Expect`,
 * HTTP/1.0, absolute-form targets, a method llhttp does not know, obs-fold, stray CR or LF,
 * anything malformed) is not rejected here but handed to Node's HTTP server, so that llhttp
 * stays the one judge of hostile input and the edge answers odd requests exactly as it always
 * has. The reader only has to be right about what it accepts, never about what it refuses.
 */
import { METHODS } from 'node:http';

/** A request the lean path serves: its head and how many bytes the head took. */
export interface LeanRequest {
  method: string;
  target: string;
  /** Header names and values as sent, alternating (like Node's `rawHeaders`). */
  rawHeaders: string[];
  /** The Host header's value, as sent. */
  host: string;
  userAgent: string;
  /** The visitor sent `Connection: close`: answer, then close. */
  close: boolean;
  /** Bytes of the head, including the blank line that ends it. */
  headBytes: number;
}

/** The buffer does not hold a whole head yet. */
export const INCOMPLETE = 0;
/** Node's HTTP server must take this connection over (see the module comment). */
export const HAND_OVER = 1;

export type ReadResult = LeanRequest | typeof INCOMPLETE | typeof HAND_OVER;

/** More header lines than this go to Node (its own cap is 2,000 pairs). */
const MAX_LEAN_HEADERS = 64;

const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');

/**
 * The methods llhttp knows, as it spells them. A token outside them (`get`, `FOO`) is handed over
 * and refused by Node (400), so both paths agree on what a method is and a rule's `method: [GET]`
 * sees the method every request that reaches it really has.
 */
const NODE_METHODS: ReadonlySet<string> = new Set(METHODS);

/** `method SP origin-form SP HTTP/1.1`: a token, then a target of visible ASCII starting at `/`. */
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\/[!-~]*) HTTP\/1\.1$/;

/**
 * `name: value` with a token name, no space before the colon, and a value of visible ASCII,
 * obs-text, spaces and tabs (RFC 9110 §5.5), leading and trailing whitespace not captured.
 * A CR, LF, NUL or other control byte anywhere fails the match.
 */
const HEADER_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[\t ]*((?:[!-~\x80-\xff](?:[\t !-~\x80-\xff]*[!-~\x80-\xff])?)?)[\t ]*$/;

/**
 * Reads one request head starting at `start`. `maxHeadBytes` is the edge's header limit: a head
 * that is (or is growing) larger is handed over, and Node answers 431 as it always has.
 */
export function readRequestHead(buffer: Buffer, start: number, maxHeadBytes: number): ReadResult {
  const end = buffer.indexOf(HEAD_END, start);
  if (end < 0) return buffer.length - start >= maxHeadBytes ? HAND_OVER : INCOMPLETE;
  const headBytes = end + 4 - start;
  if (headBytes > maxHeadBytes) return HAND_OVER;
  const last = lastRead;
  if (headBytes === lastLength && last !== undefined && buffer.compare(lastBytes, 0, headBytes, start, start + headBytes) === 0) {
    return {
      method: last.method,
      target: last.target,
      rawHeaders: last.rawHeaders.slice(),
      host: last.host,
      userAgent: last.userAgent,
      close: last.close,
      headBytes,
    };
  }
  const read = readHead(buffer, start, end, headBytes);
  if (read !== HAND_OVER && headBytes <= MAX_REMEMBERED_HEAD_BYTES) {
    buffer.copy(lastBytes, 0, start, start + headBytes);
    lastLength = headBytes;
    lastRead = { ...read, rawHeaders: read.rawHeaders.slice() };
  }
  return read;
}

/** Longest head remembered for the next read; longer ones are read every time. */
const MAX_REMEMBERED_HEAD_BYTES = 2048;

/**
 * The bytes of the last head read, and what was read from them: a client tends to repeat its head
 * byte for byte (a poller, a health check, a load generator), and comparing the bytes costs a
 * fraction of reading them (a latin1 string, a regular expression per line, a string per name
 * and value). The result depends on those bytes alone. Each read gets its own header array.
 * Not from Buffer's shared pool: the buffer lives as long as the process.
 */
const lastBytes = Buffer.allocUnsafeSlow(MAX_REMEMBERED_HEAD_BYTES);
let lastLength = -1;
let lastRead: LeanRequest | undefined;

/** Reads the head in `buffer` from `start` to `end`, where its blank line begins. */
function readHead(buffer: Buffer, start: number, end: number, headBytes: number): LeanRequest | typeof HAND_OVER {
  const lines = buffer.toString('latin1', start, end).split('\r\n');
  if (lines.length - 1 > MAX_LEAN_HEADERS) return HAND_OVER;
  const requestLine = REQUEST_LINE.exec(lines[0]!);
  if (!requestLine || !NODE_METHODS.has(requestLine[1]!)) return HAND_OVER;

  const rawHeaders: string[] = [];
  let host: string | undefined;
  let userAgent = '';
  let close = false;
  let contentLength = false;
  for (let i = 1; i < lines.length; i++) {
    const header = HEADER_LINE.exec(lines[i]!);
    if (!header) return HAND_OVER;
    const name = header[1]!;
    const value = header[2]!;
    rawHeaders.push(name, value);
    switch (name.length) {
      // Only names of these lengths matter here; skipping toLowerCase for the rest keeps the loop cheap.
      case 4:
        if (name.toLowerCase() === 'host') {
          if (host !== undefined) return HAND_OVER;
          host = value;
        }
        break;
      case 6:
        if (name.toLowerCase() === 'expect') return HAND_OVER;
        break;
      case 7:
        if (name.toLowerCase() === 'upgrade') return HAND_OVER;
        break;
      case 10: {
        const lower = name.toLowerCase();
        if (lower === 'user-agent') userAgent = value;
        else if (lower === 'connection') {
          const tokens = value.toLowerCase();
          if (tokens.includes('upgrade')) return HAND_OVER;
          if (/(?:^|,)[\t ]*close[\t ]*(?:,|$)/.test(tokens)) close = true;
        }
        break;
      }
      case 14:
        // A body, however announced, is Node's to frame: only one explicit zero stays here. A
        // repeated one (even `0` twice) is Node's to refuse (400), as it would on its own path,
        // rather than forwarded to the local service as two lengths.
        if (name.toLowerCase() === 'content-length') {
          if (value !== '0' || contentLength) return HAND_OVER;
          contentLength = true;
        }
        break;
      case 17:
        if (name.toLowerCase() === 'transfer-encoding') return HAND_OVER;
        break;
    }
  }
  if (host === undefined) return HAND_OVER;
  return { method: requestLine[1]!, target: requestLine[2]!, rawHeaders, host, userAgent, close, headBytes };
}
