import { STATUS_CODES } from 'node:http';
import { INVALID_VALUE, TOKEN } from '@svcrouter/protocol';
import { MAX_REMEMBERED_FIELDS, samePairs } from '../forwarding.js';
import { httpDate } from '../http-date.js';

/** How the body after a head is framed on the visitor's connection. */
export const BodyFraming = {
  /** No body may follow (HEAD, 204, 304). */
  NONE: 0,
  /** Exactly `length` bytes follow, as the origin's Content-Length said. */
  LENGTH: 1,
  /** The origin gave no length: chunked transfer coding, ended by a zero chunk. */
  CHUNKED: 2,
} as const;
export type BodyFramingValue = (typeof BodyFraming)[keyof typeof BodyFraming];

export interface VisitorResponseHead {
  /** The serialised head, ready to write as latin1. */
  readonly text: string;
  readonly framing: BodyFramingValue;
  /** Body bytes announced by Content-Length (framing LENGTH). */
  readonly length: number;
}

const DIGITS = /^\d{1,15}$/;

/**
 * Serialises a response head for an HTTP/1.1 visitor from the origin's status and headers
 * (hop-by-hop ones already removed). Returns undefined for a head Node's `writeHead` would refuse
 * too: a bad status, a header name that is not a token, a value with a control byte (which
 * could split the response), or a Content-Length that is not one decimal number.
 */
export function visitorResponseHead(
  status: number,
  headers: readonly string[],
  requestMethod: string,
  keepAlive: boolean,
): VisitorResponseHead | undefined {
  const date = httpDate();
  const memo = lastHead;
  if (
    status === memo.status &&
    date === memo.date &&
    requestMethod === memo.requestMethod &&
    keepAlive === memo.keepAlive &&
    samePairs(headers, memo.headers)
  ) {
    return memo.head;
  }
  const head = serialiseHead(status, headers, requestMethod, keepAlive, date);
  if (head !== undefined && headers.length <= MAX_REMEMBERED_FIELDS) {
    lastHead = { status, date, headers: headers.slice(), requestMethod, keepAlive, head };
  }
  return head;
}

/**
 * The last head serialised, what it was made of, and the second it was made in (the Date the
 * edge adds when the origin sent none). Consecutive responses on the edge are often the same
 * head for the same kind of request (an origin answering one path the same way): the same
 * inputs in the same second give the same text, found by comparing them in a fraction of the
 * time the checks and the concatenation take.
 */
let lastHead: {
  status: number;
  date: string;
  headers: readonly string[];
  requestMethod: string;
  keepAlive: boolean;
  head: VisitorResponseHead;
  // NaN: the placeholder matches no status.
} = { status: NaN, date: '', headers: [], requestMethod: '', keepAlive: false, head: { text: '', framing: BodyFraming.NONE, length: 0 } };

function serialiseHead(
  status: number,
  headers: readonly string[],
  requestMethod: string,
  keepAlive: boolean,
  date: string,
): VisitorResponseHead | undefined {
  if (!Number.isInteger(status) || status < 200 || status > 599) return undefined;
  let text = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`;
  let length = -1;
  let hasDate = false;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    const value = headers[i + 1]!;
    if (!TOKEN.test(name) || INVALID_VALUE.test(value)) return undefined;
    if (name.length === 14 && name.toLowerCase() === 'content-length') {
      const trimmed = value.trim();
      if (!DIGITS.test(trimmed) || (length >= 0 && Number(trimmed) !== length)) return undefined;
      length = Number(trimmed);
    } else if (name.length === 4 && name.toLowerCase() === 'date') {
      hasDate = true;
    }
    text += `${name}: ${value}\r\n`;
  }
  if (!hasDate) text += `date: ${date}\r\n`;
  let framing: BodyFramingValue;
  if (requestMethod === 'HEAD' || status === 204 || status === 304) framing = BodyFraming.NONE;
  else if (length >= 0) framing = BodyFraming.LENGTH;
  else {
    framing = BodyFraming.CHUNKED;
    text += 'transfer-encoding: chunked\r\n';
  }
  if (!keepAlive) text += 'connection: close\r\n';
  return { text: `${text}\r\n`, framing, length: Math.max(length, 0) };
}

/**
 * Serialises an informational (1xx) head for an HTTP/1.1 visitor (103 Early Hints, say), or
 * undefined for one that must not be passed: a 101 (only an upgrade may switch), a status outside
 * 1xx, a header name that is not a token or a value with a control byte.
 */
export function visitorInterimHead(status: number, headers: readonly string[]): string | undefined {
  if (!Number.isInteger(status) || status < 100 || status > 199 || status === 101) return undefined;
  let text = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Informational'}\r\n`;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    const value = headers[i + 1]!;
    if (!TOKEN.test(name) || INVALID_VALUE.test(value)) return undefined;
    text += `${name}: ${value}\r\n`;
  }
  return `${text}\r\n`;
}
