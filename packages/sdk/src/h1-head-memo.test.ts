import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResponseParser, type ResponseHandler, type SharedHead } from './h1-response-parser.js';

/** One response as the handler saw it. */
interface Seen {
  status: number;
  headers: string[];
  shared: SharedHead | undefined;
  body: string;
  complete: boolean;
  keepAlive: boolean;
}

/** Parses responses one after another on one parser, as one keep-alive connection does. */
function parseInTurn(responses: Array<string | string[]>): Seen[] {
  const parser = new ResponseParser();
  return responses.map((response) => {
    const seen: Seen = { status: 0, headers: [], shared: undefined, body: '', complete: false, keepAlive: false };
    const handler: ResponseHandler = {
      onResponseHead(status, headers, shared) {
        seen.status = status;
        seen.headers = headers;
        seen.shared = shared;
      },
      onResponseBody(chunk) {
        seen.body += chunk.toString('latin1');
      },
      onResponseComplete() {
        seen.complete = true;
      },
    };
    parser.reset(handler, false);
    for (const piece of typeof response === 'string' ? [response] : response) parser.push(Buffer.from(piece, 'latin1'));
    seen.keepAlive = parser.keepAlive;
    return seen;
  });
}

const HEAD_A = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nDate: Sun, 06 Dec 2026 05:00:00 GMT\r\n\r\n';
const HEAD_B = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nDate: Sun, 06 Dec 2026 05:00:01 GMT\r\n\r\n';

describe('ResponseParser: a head repeated byte for byte', () => {
  it('hands the same head and header array to each response that repeats it, bodies apart', () => {
    const [first, second, third] = parseInTurn([`${HEAD_A}hello`, `${HEAD_A}world`, `${HEAD_A}again`]);
    for (const seen of [first!, second!, third!]) {
      assert.equal(seen.status, 200);
      assert.deepEqual(seen.headers, ['Content-Type', 'text/plain', 'Content-Length', '5', 'Date', 'Sun, 06 Dec 2026 05:00:00 GMT']);
      assert.equal(seen.complete, true);
      assert.equal(seen.keepAlive, true);
    }
    assert.deepEqual([first!.body, second!.body, third!.body], ['hello', 'world', 'again']);
    assert.ok(first!.shared !== undefined);
    assert.equal(second!.shared, first!.shared);
    assert.equal(third!.headers, first!.headers);
  });

  it('reads a head that differs in one byte afresh, and shares that one from then on', () => {
    const [a, b, b2] = parseInTurn([`${HEAD_A}hello`, `${HEAD_B}world`, `${HEAD_B}again`]);
    assert.notEqual(b!.shared, a!.shared);
    assert.equal(b!.headers[5], 'Sun, 06 Dec 2026 05:00:01 GMT');
    assert.equal(a!.headers[5], 'Sun, 06 Dec 2026 05:00:00 GMT');
    assert.equal(b2!.shared, b!.shared);
  });

  it('reads a head split across reads afresh, without sharing it, and still matches a whole one later', () => {
    const split = [HEAD_A.slice(0, 30), HEAD_A.slice(30) + 'hello'];
    const [whole, parted, again] = parseInTurn([`${HEAD_A}hello`, split, `${HEAD_A}again`]);
    assert.equal(parted!.shared, undefined);
    assert.deepEqual(parted!.headers, whole!.headers);
    assert.notEqual(parted!.headers, whole!.headers);
    assert.equal(parted!.body, 'hello');
    assert.equal(again!.shared, whole!.shared);
  });

  it('keeps what the head says about the connection and the framing when it is repeated', () => {
    const closing = 'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok';
    const chunked = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n';
    const [c1, c2, k1, k2] = parseInTurn([closing, closing, chunked, chunked]);
    assert.equal(c2!.shared, c1!.shared);
    assert.equal(c1!.keepAlive, false);
    assert.equal(c2!.keepAlive, false);
    assert.equal(k2!.shared, k1!.shared);
    assert.deepEqual([k1!.body, k2!.body, k1!.keepAlive, k2!.keepAlive], ['ok', 'ok', true, true]);
  });

  it('does not keep a head longer than a kilobyte', () => {
    const long = `HTTP/1.1 200 OK\r\nX-Long: ${'a'.repeat(2000)}\r\nContent-Length: 2\r\n\r\nok`;
    const [first, second] = parseInTurn([long, long]);
    assert.equal(first!.shared, undefined);
    assert.equal(second!.shared, undefined);
    assert.equal(second!.body, 'ok');
  });
});
