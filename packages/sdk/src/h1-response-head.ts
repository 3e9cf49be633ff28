/** The origin sent something that is not a valid HTTP/1.x response. */
export class ResponseParseError extends Error {
  override name = 'ResponseParseError';
}

/** What the body framing and connection reuse need from one response head. */
export interface ResponseHeadInfo {
  status: number;
  /** Flat pairs, names as the origin sent them, values without surrounding whitespace. */
  headers: string[];
  /** HTTP/1.1 without `Connection: close`. Framing may still rule reuse out. */
  keepAlive: boolean;
  /** The Content-Length, when present. */
  contentLength: number | undefined;
  /** Present with Transfer-Encoding: true when its last coding is chunked. */
  chunked: boolean | undefined;
}

/** Longest Content-Length we read: 15 digits keep the number exact. */
const MAX_CONTENT_LENGTH_DIGITS = 15;

/** tchar (RFC 9110 §5.6.2): the bytes a header name may use. */
const TOKEN = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") TOKEN[c.charCodeAt(0)] = 1;

/**
 * Reads a response head: the status line and header lines separated by CRLF, without the
 * blank line that ends them, as a latin1 string (one byte per char). Strict: a bare CR or LF,
 * a folded line (obs-fold), a name that is not a token or a control byte in a value throws.
 */
export function readHead(text: string): ResponseHeadInfo {
  const lineEnd = endOfLine(text, 0);
  const { status, minor } = readStatusLine(text, lineEnd);
  const info: ResponseHeadInfo = {
    status,
    headers: [],
    keepAlive: minor === 1,
    contentLength: undefined,
    chunked: undefined,
  };
  for (let start = lineEnd + 2; start < text.length;) {
    const end = endOfLine(text, start);
    readHeaderLine(text, start, end, info);
    start = end + 2;
  }
  // Transfer-Encoding overrides Content-Length, and a proxy must not forward the overridden
  // length (RFC 9112 §6.3): the edge drops Transfer-Encoding and would keep a false length.
  if (info.chunked !== undefined && info.contentLength !== undefined) dropContentLength(info.headers);
  return info;
}

function dropContentLength(headers: string[]): void {
  for (let i = headers.length - 2; i >= 0; i -= 2) {
    if (headers[i]!.toLowerCase() === 'content-length') headers.splice(i, 2);
  }
}

/** Index of the CRLF that ends the line starting at `start`, or the text's length for the last line. */
function endOfLine(text: string, start: number): number {
  const end = text.indexOf('\r\n', start);
  return end < 0 ? text.length : end;
}

/** `HTTP/1.x NNN[ reason]`; the reason is checked for control bytes and dropped. */
function readStatusLine(text: string, end: number): { status: number; minor: number } {
  const minor = text.charCodeAt(7) - 0x30;
  if (end < 12 || !text.startsWith('HTTP/1.') || (minor !== 0 && minor !== 1) || text.charCodeAt(8) !== 0x20) {
    throw new ResponseParseError('invalid status line');
  }
  let status = 0;
  for (let i = 9; i < 12; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) throw new ResponseParseError('invalid status code');
    status = status * 10 + digit;
  }
  if (status < 100) throw new ResponseParseError('invalid status code');
  // Many servers omit the space before an empty reason; accept "HTTP/1.1 200" as well.
  if (end > 12 && text.charCodeAt(12) !== 0x20) throw new ResponseParseError('invalid status line');
  for (let i = 13; i < end; i++) {
    if (isControl(text.charCodeAt(i))) throw new ResponseParseError('invalid status line');
  }
  return { status, minor };
}

/** Reads `name: value` from text[start, end) into `info`. */
function readHeaderLine(text: string, start: number, end: number, info: ResponseHeadInfo): void {
  const first = text.charCodeAt(start);
  if (first === 0x20 || first === 0x09) throw new ResponseParseError('obsolete line folding in response head');
  let colon = start;
  while (colon < end) {
    const c = text.charCodeAt(colon);
    if (c === 0x3a) break;
    if (c >= 128 || TOKEN[c] === 0) throw new ResponseParseError('invalid header name');
    colon++;
  }
  if (colon === start || colon === end) throw new ResponseParseError('invalid header line');
  let valueStart = colon + 1;
  let valueEnd = end;
  while (valueStart < valueEnd && isWhitespace(text.charCodeAt(valueStart))) valueStart++;
  while (valueEnd > valueStart && isWhitespace(text.charCodeAt(valueEnd - 1))) valueEnd--;
  for (let i = valueStart; i < valueEnd; i++) {
    if (isControl(text.charCodeAt(i))) throw new ResponseParseError('invalid header value');
  }
  const name = text.slice(start, colon);
  const value = text.slice(valueStart, valueEnd);
  info.headers.push(name, value);
  // The three names that decide framing and reuse, found by length before any lower-casing.
  const length = colon - start;
  if (length === 14 && name.toLowerCase() === 'content-length') readContentLength(value, info);
  else if (length === 17 && name.toLowerCase() === 'transfer-encoding') info.chunked = lastCodingIsChunked(value);
  else if (length === 10 && name.toLowerCase() === 'connection' && hasCloseToken(value)) info.keepAlive = false;
}

/** One decimal integer; a repeated header must repeat the same value. */
function readContentLength(value: string, info: ResponseHeadInfo): void {
  if (value.length === 0 || value.length > MAX_CONTENT_LENGTH_DIGITS) throw new ResponseParseError('invalid content-length');
  let length = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) throw new ResponseParseError('invalid content-length');
    length = length * 10 + digit;
  }
  if (info.contentLength !== undefined && info.contentLength !== length) {
    throw new ResponseParseError('conflicting content-length headers');
  }
  info.contentLength = length;
}

/** Whether the last coding of a Transfer-Encoding value is `chunked` (the later header wins). */
function lastCodingIsChunked(value: string): boolean {
  const last = value.slice(value.lastIndexOf(',') + 1).trim();
  return last.length === 7 && last.toLowerCase() === 'chunked';
}

/** Whether a Connection value lists `close`. */
function hasCloseToken(value: string): boolean {
  const lower = value.toLowerCase();
  if (!lower.includes('close')) return false; // the usual "keep-alive" costs no split
  for (const token of lower.split(',')) {
    if (token.trim() === 'close') return true;
  }
  return false;
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

/** Control chars other than HTAB (CR and LF included): never valid inside a line. */
export function isControl(c: number): boolean {
  return (c < 0x20 && c !== 0x09) || c === 0x7f;
}
