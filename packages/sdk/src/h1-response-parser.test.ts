import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_HEAD_BYTES, ResponseParseError, ResponseParser, type ResponseHandler } from './h1-response-parser.js';

/** What one parse produced. */
interface Outcome {
  status: number;
  headers: string[];
  body: string;
  complete: boolean;
  keepAlive: boolean;
  extraBytes: boolean;
  error: Error | undefined;
  /** The trailer section as reported (onResponseTrailers), if it was. */
  trailers?: string[];
  /** Event names in order: head, body, trailers, complete. */
  events: string[];
}

/** Deterministic PRNG (mulberry32), so a failing split can be replayed by seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The ways a response is cut into chunks: whole, byte by byte, and random splits. */
function splittings(bytes: Buffer): Array<{ name: string; chunks: Buffer[] }> {
  const out = [
    { name: 'whole', chunks: [bytes] },
    { name: 'byte by byte', chunks: [...bytes].map((b) => Buffer.from([b])) },
  ];
  for (let seed = 1; seed <= 5; seed++) {
    const random = prng(seed);
    const chunks: Buffer[] = [];
    for (let offset = 0; offset < bytes.length;) {
      const size = 1 + Math.floor(random() * 24);
      chunks.push(bytes.subarray(offset, offset + size));
      offset += size;
    }
    out.push({ name: `random splits (seed ${seed})`, chunks });
  }
  return out;
}

function parseChunks(chunks: Buffer[], options: { noBody?: boolean; eof?: boolean } = {}): Outcome {
  const outcome: Outcome = {
    status: 0,
    headers: [],
    body: '',
    complete: false,
    keepAlive: false,
    extraBytes: false,
    error: undefined,
    events: [],
  };
  const parser = new ResponseParser();
  const handler: ResponseHandler = {
    onInterimHead(status, headers) {
      outcome.events.push(`interim ${status} ${headers.join('|')}`);
    },
    onResponseHead(status, headers) {
      outcome.status = status;
      outcome.headers = headers;
      outcome.events.push('head');
    },
    onResponseBody(chunk) {
      outcome.body += chunk.toString('latin1');
      if (outcome.events.at(-1) !== 'body') outcome.events.push('body');
    },
    onResponseTrailers(fields) {
      outcome.trailers = fields;
      outcome.events.push('trailers');
    },
    onResponseComplete() {
      outcome.complete = true;
      outcome.events.push('complete');
    },
  };
  parser.reset(handler, options.noBody ?? false);
  try {
    for (const chunk of chunks) parser.push(chunk);
    if (options.eof) parser.end();
  } catch (error) {
    outcome.error = error as Error;
  }
  outcome.keepAlive = parser.keepAlive;
  outcome.extraBytes = parser.extraBytes;
  return outcome;
}

/** Parses `raw` every way it can be split; all must agree, and the agreed outcome is returned. */
function parseAllWays(raw: string, options: { noBody?: boolean; eof?: boolean } = {}): Outcome {
  const bytes = Buffer.from(raw, 'latin1');
  let first: Outcome | undefined;
  for (const { name, chunks } of splittings(bytes)) {
    const outcome = parseChunks(chunks, options);
    if (first === undefined) first = outcome;
    else assert.deepEqual(outcome, first, `${name} disagrees with the whole chunk`);
  }
  return first!;
}

function rejects(raw: string, message: RegExp): void {
  const outcome = parseAllWays(raw);
  assert.ok(outcome.error instanceof ResponseParseError, `expected a ResponseParseError, got ${String(outcome.error)}`);
  assert.match(outcome.error.message, message);
  assert.equal(outcome.complete, false);
}

describe('ResponseParser framing', () => {
  it('reads a Content-Length body and keeps HTTP/1.1 connections alive', () => {
    const outcome = parseAllWays('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello');
    assert.equal(outcome.error, undefined);
    assert.equal(outcome.status, 200);
    assert.deepEqual(outcome.headers, ['Content-Type', 'text/plain', 'Content-Length', '5']);
    assert.equal(outcome.body, 'hello');
    assert.equal(outcome.complete, true);
    assert.equal(outcome.keepAlive, true);
    assert.equal(outcome.extraBytes, false);
    assert.deepEqual(outcome.events, ['head', 'body', 'complete']);
  });

  it('keeps header names as sent and trims optional whitespace around values', () => {
    const outcome = parseAllWays(
      'HTTP/1.1 200 OK\r\nX-Mixed-Case:  a b \t\r\nset-cookie: a=1\r\nSet-Cookie:b=2\r\nEmpty:\r\ncontent-length: 0\r\n\r\n',
    );
    assert.deepEqual(outcome.headers, [
      'X-Mixed-Case',
      'a b',
      'set-cookie',
      'a=1',
      'Set-Cookie',
      'b=2',
      'Empty',
      '',
      'content-length',
      '0',
    ]);
    assert.equal(outcome.complete, true);
  });

  it('accepts a status line without a reason phrase', () => {
    const outcome = parseAllWays('HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n');
    assert.equal(outcome.status, 200);
    assert.equal(outcome.complete, true);
  });

  it('decodes chunked bodies, ignoring extensions, and reports the trailer section before completing', () => {
    const raw =
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
      '5;name=value\r\nhello\r\n' +
      '1A \t; x="y"\r\nabcdefghijklmnopqrstuvwxyz\r\n' +
      '0\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\n';
    const outcome = parseAllWays(raw);
    assert.equal(outcome.error, undefined);
    assert.equal(outcome.body, 'helloabcdefghijklmnopqrstuvwxyz');
    assert.equal(outcome.complete, true);
    assert.equal(outcome.keepAlive, true);
    assert.deepEqual(outcome.headers, ['Transfer-Encoding', 'chunked']);
    assert.deepEqual(outcome.trailers, ['X-Trailer', '1', 'X-Other', '2']);
    assert.deepEqual(outcome.events, ['head', 'body', 'trailers', 'complete']);
  });

  it('trims trailer values and skips trailer lines without a colon', () => {
    const outcome = parseAllWays('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nx-sum:  \tabc \r\nno colon\r\n: empty\r\n\r\n');
    assert.equal(outcome.complete, true);
    assert.deepEqual(outcome.trailers, ['x-sum', 'abc']);
  });

  it('rejects a control byte in a trailer line', () => {
    rejects('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nx-sum: a\x00b\r\n\r\n', /invalid trailer/);
  });

  it('completes a chunked body without trailers', () => {
    const outcome = parseAllWays('HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, CHUNKED\r\n\r\n3\r\nabc\r\n0\r\n\r\n');
    assert.equal(outcome.body, 'abc');
    assert.equal(outcome.complete, true);
    assert.equal(outcome.trailers, undefined);
  });

  it('reads a body without length until the origin closes, and does not reuse the connection', () => {
    const open = parseAllWays('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it');
    assert.equal(open.body, 'all of it');
    assert.equal(open.complete, false);
    const closed = parseAllWays('HTTP/1.1 200 OK\r\n\r\nall of it', { eof: true });
    assert.equal(closed.complete, true);
    assert.equal(closed.keepAlive, false);
  });

  it('reads until close when the last transfer coding is not chunked', () => {
    const outcome = parseAllWays('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n5\r\nabc', { eof: true });
    assert.equal(outcome.body, '5\r\nabc');
    assert.equal(outcome.complete, true);
    assert.equal(outcome.keepAlive, false);
  });

  it('lets Transfer-Encoding win over Content-Length, and gives up the connection', () => {
    const outcome = parseAllWays('HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n');
    assert.equal(outcome.body, 'ok');
    assert.equal(outcome.complete, true);
    assert.equal(outcome.keepAlive, false);
    assert.deepEqual(outcome.headers, ['Transfer-Encoding', 'chunked'], 'the overridden length is not forwarded');
  });

  it('reads no body for a HEAD request whatever the headers say', () => {
    const outcome = parseAllWays('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n', { noBody: true });
    assert.equal(outcome.complete, true);
    assert.equal(outcome.body, '');
    assert.equal(outcome.keepAlive, true);
  });

  for (const status of [204, 304]) {
    it(`reads no body for ${status} whatever the headers say`, () => {
      const outcome = parseAllWays(`HTTP/1.1 ${status} X\r\nContent-Length: 10\r\n\r\n`);
      assert.equal(outcome.status, status);
      assert.equal(outcome.complete, true);
      assert.equal(outcome.keepAlive, true);
    });
  }

  it('reports interim responses (100, 103) with their headers, then the final one', () => {
    const raw =
      'HTTP/1.1 100 Continue\r\n\r\n' +
      'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n' +
      'HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok';
    const outcome = parseAllWays(raw);
    assert.equal(outcome.status, 201);
    assert.deepEqual(outcome.headers, ['Content-Length', '2']);
    assert.equal(outcome.body, 'ok');
    assert.deepEqual(outcome.events, ['interim 100 ', 'interim 103 Link|</style.css>; rel=preload', 'head', 'body', 'complete']);
  });

  it('completes at once on Content-Length: 0', () => {
    const outcome = parseAllWays('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    assert.deepEqual(outcome.events, ['head', 'complete']);
  });

  it('accepts repeated identical Content-Length headers', () => {
    const outcome = parseAllWays('HTTP/1.1 200 OK\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\nabc');
    assert.equal(outcome.body, 'abc');
    assert.equal(outcome.complete, true);
  });

  it('does not keep HTTP/1.0 responses or Connection: close alive', () => {
    assert.equal(parseAllWays('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n').keepAlive, false);
    assert.equal(parseAllWays('HTTP/1.1 200 OK\r\nConnection: Upgrade, Close\r\nContent-Length: 0\r\n\r\n').keepAlive, false);
    assert.equal(parseAllWays('HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n').keepAlive, true);
  });

  it('flags bytes that follow a complete response', () => {
    const outcome = parseAllWays('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n');
    assert.equal(outcome.body, 'ok');
    assert.equal(outcome.complete, true);
    assert.equal(outcome.extraBytes, true);
  });

  it('reports a body cut short by the close as incomplete', () => {
    const bytes = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    const parser = new ResponseParser();
    let complete = false;
    parser.reset({ onResponseHead() {}, onResponseBody() {}, onResponseComplete: () => (complete = true) }, false);
    parser.push(bytes);
    assert.equal(parser.end(), false);
    assert.equal(complete, false);
  });

  it('stops at once when the handler detaches it mid-body', () => {
    const parser = new ResponseParser();
    const seen: string[] = [];
    parser.reset(
      {
        onResponseHead: () => seen.push('head'),
        onResponseBody: () => {
          seen.push('body');
          parser.detach();
        },
        onResponseComplete: () => seen.push('complete'),
      },
      false,
    );
    parser.push(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n1\r\nb\r\n0\r\n\r\n'));
    assert.deepEqual(seen, ['head', 'body']);
  });
});

describe('ResponseParser rejections', () => {
  for (const line of [
    'HTTP/2 200 OK',
    'HTTP/1.1 20 OK',
    'HTTP/1.2 200 OK',
    'ICY 200 OK',
    'HTTP/1.1 200OK',
    'HTTP/1.1 099 Low',
    'http/1.1 200 OK',
  ]) {
    it(`rejects the status line "${line}"`, () => rejects(`${line}\r\nContent-Length: 0\r\n\r\n`, /status/));
  }

  it('rejects obsolete line folding', () => rejects('HTTP/1.1 200 OK\r\nX-Long: a\r\n  b\r\nContent-Length: 0\r\n\r\n', /folding/));
  it('rejects whitespace before the colon', () => rejects('HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n', /header name/));
  it('rejects a header line without a colon', () => rejects('HTTP/1.1 200 OK\r\nNoColon\r\n\r\n', /header line/));
  it('rejects bare LF line endings', () => rejects('HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n', /status line/));
  // An origin writing LF-only heads and keeping the connection open: the CRLFCRLF never comes.
  for (const [name, raw] of [
    ['all LF', 'HTTP/1.1 200 OK\nContent-Length: 2\n\nok'],
    ['CRLF lines, LF blank line', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\nok'],
    ['LF lines, CRLF blank line', 'HTTP/1.1 200 OK\nContent-Length: 2\n\r\nok'],
  ]) {
    it(`rejects a head ended by a bare LF (${name}) without waiting for more`, () => rejects(raw!, /bare LF/));
  }
  it('rejects a bare CR inside a header value', () => rejects('HTTP/1.1 200 OK\r\nX-A: a\rb\r\nContent-Length: 0\r\n\r\n', /header value/));
  it('rejects conflicting Content-Length headers', () =>
    rejects('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd', /conflicting/));
  for (const value of ['12a', '-1', '1,1', '', '1234567890123456']) {
    it(`rejects Content-Length "${value}"`, () => rejects(`HTTP/1.1 200 OK\r\nContent-Length: ${value}\r\n\r\n`, /content-length/));
  }
  it('rejects 101 to a request that asked for no upgrade', () => rejects('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n', /101/));

  for (const size of ['zz', '-1', ' 5', '', '5x']) {
    it(`rejects the chunk size "${size}"`, () =>
      rejects(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${size}\r\nhello\r\n0\r\n\r\n`, /chunk size/));
  }
  it('rejects a chunk size that would overflow', () =>
    rejects('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\n', /too large/));
  it('rejects chunk data not followed by CRLF', () =>
    rejects('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n', /CRLF/));
  it('rejects a chunk size line ended by a bare LF', () =>
    rejects('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nab\r\n0\r\n\r\n', /chunk size/));

  it('rejects a head larger than the limit, whole or in pieces', () => {
    const big = `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(MAX_HEAD_BYTES)}\r\n\r\n`;
    const bytes = Buffer.from(big);
    for (const chunks of [[bytes], [bytes.subarray(0, 1000), bytes.subarray(1000)]]) {
      const outcome = parseChunks(chunks);
      assert.match(String(outcome.error?.message), /too large/);
    }
    // Without a terminator in sight: fails once the held bytes pass the limit.
    const parser = new ResponseParser();
    parser.reset({ onResponseHead() {}, onResponseBody() {}, onResponseComplete() {} }, false);
    parser.push(Buffer.from('HTTP/1.1 200 OK\r\n'));
    assert.throws(() => {
      for (let i = 0; i < MAX_HEAD_BYTES; i += 1024) parser.push(Buffer.alloc(1024, 'a'));
    }, /too large/);
  });

  it('accepts a head just under the limit', () => {
    const prefix = 'HTTP/1.1 200 OK\r\nX-Big: ';
    const suffix = '\r\nContent-Length: 0\r\n\r\n';
    const raw = prefix + 'a'.repeat(MAX_HEAD_BYTES - prefix.length - suffix.length) + suffix;
    assert.equal(Buffer.byteLength(raw), MAX_HEAD_BYTES);
    const outcome = parseChunks([Buffer.from(raw)]);
    assert.equal(outcome.error, undefined);
    assert.equal(outcome.complete, true);
  });
});
