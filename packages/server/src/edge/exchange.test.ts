import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ResetCode, type RequestHead } from '@svcrouter/protocol';
import { EdgeExchange, type CutCode, type Exchange, type ExchangeStream, type VisitorWriter } from './exchange.js';
import type { RequestKind } from './forwarding.js';
import type { EdgePage } from './pages.js';
import type { Binding } from './router.js';

/** Records what the exchange asks of the visitor's side; `full` makes writeBody report a full socket. */
class RecordingWriter implements VisitorWriter {
  readonly calls: string[] = [];
  pages: EdgePage[] = [];
  head: { status: number; headers: string[] } | undefined;
  refuseHead = false;
  full = false;
  sendPage(page: EdgePage): void {
    this.pages.push(page);
    this.calls.push(`page ${page.status}`);
  }
  writeInterim(status: number, headers: string[]): void {
    this.calls.push(`interim ${status} ${headers.join(' ')}`.trimEnd());
  }
  writeHead(status: number, headers: string[]): boolean {
    if (this.refuseHead) return false;
    this.head = { status, headers };
    this.calls.push(`head ${status}`);
    return true;
  }
  writeBody(chunk: Buffer): boolean {
    this.calls.push(`body ${chunk.length}`);
    return !this.full;
  }
  endBody(trailers: readonly string[] | undefined): void {
    this.calls.push(trailers === undefined ? 'end' : `end ${trailers.join(' ')}`);
  }
  abort(code: CutCode): void {
    this.calls.push(code === 'INTERNAL_ERROR' ? 'abort' : `abort ${code}`);
  }
  stopUpload(bytesRead: number): void {
    this.calls.push(`stop upload ${bytesRead}`);
  }
}

class RecordingStream implements ExchangeStream {
  readonly calls: string[] = [];
  trailers: unknown = undefined;
  pause(): void {
    this.calls.push('pause');
  }
  resume(): void {
    this.calls.push('resume');
  }
  reset(code = 'CANCEL'): void {
    this.calls.push(`reset ${code}`);
  }
}

interface Setup {
  exchange: EdgeExchange;
  writer: RecordingWriter;
  stream: RecordingStream;
  observed: Exchange[];
  metered: number[];
  sent: RequestHead[];
}

/** An exchange routed to a binding, its stream opened; `quota` bytes may pass before the meter says no. */
function opened(
  options: { kind?: RequestKind; quota?: number; rawHeaders?: string[]; features?: string[]; expectContinue?: boolean } = {},
): Setup {
  const observed: Exchange[] = [];
  const metered: number[] = [];
  let left = options.quota ?? Infinity;
  const exchange = new EdgeExchange(
    {
      host: 'app.example.com',
      method: 'GET',
      path: '/x',
      ip: '192.0.2.7',
      userAgent: 'test',
      proto: 'HTTP/1.1',
      secure: true,
      absolute: undefined,
    },
    {
      observe: (record) => observed.push(record),
      meter: (_account, bytes) => {
        metered.push(bytes);
        left -= bytes;
        return left >= 0;
      },
    },
  );
  const writer = new RecordingWriter();
  exchange.respondThrough(writer);
  const session = { mux: {}, agentFeatures: new Set(options.features ?? []) };
  exchange.binding = { tunnelId: 't1', accountId: 'a1', local: 'localhost:3000', session } as unknown as Binding;
  const stream = new RecordingStream();
  const sent: RequestHead[] = [];
  const source = { rawHeaders: options.rawHeaders ?? ['Host', 'app.example.com'], method: 'GET', url: '/x' };
  const open = (_mux: unknown, head: RequestHead): RecordingStream => {
    sent.push(head);
    return stream;
  };
  const result = exchange.open(source, options.kind ?? 'request', false, open, options.expectContinue);
  assert.equal(result, stream);
  return { exchange, writer, stream, observed, metered, sent };
}

test('a refused exchange answers its page and is observed once, with its status and a duration', () => {
  const { exchange, writer, observed } = opened();
  exchange.refuse({ status: 429, headers: {}, body: '' });
  exchange.finish();
  assert.deepEqual(writer.calls, ['page 429']);
  assert.equal(observed.length, 1);
  assert.equal(observed[0]!.status, 429);
  assert.ok(observed[0]!.durationMs >= 0);
});

test('the request head is built by the forwarding rules, with the tunnel and the scheme', () => {
  const { sent } = opened({ rawHeaders: ['Host', 'app.example.com', 'Connection', 'x-drop', 'X-Drop', '1', 'X-Keep', '2'] });
  const head = sent[0]!;
  assert.equal(head.t, 't1');
  assert.equal(head.b, undefined);
  const names = head.h.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());
  assert.ok(names.includes('x-keep') && !names.includes('x-drop') && !names.includes('connection'));
  assert.equal(head.h[head.h.indexOf('x-forwarded-proto') + 1], 'https');
  assert.equal(head.h[head.h.indexOf('x-forwarded-for') + 1], '192.0.2.7');
});

test('a response head reaches the writer without hop-by-hop fields; body bytes follow with backpressure', () => {
  const { exchange, writer, stream, observed } = opened();
  assert.equal(exchange.onHeaders({ s: 200, h: ['Content-Type', 'text/plain', 'Keep-Alive', 'timeout=5'] }), true);
  assert.deepEqual(writer.head, { status: 200, headers: ['Content-Type', 'text/plain'] });
  writer.full = true;
  exchange.onData(Buffer.alloc(10));
  assert.deepEqual(stream.calls, ['pause']);
  exchange.visitorDrained();
  assert.deepEqual(stream.calls, ['pause', 'resume']);
  exchange.onEnd();
  assert.deepEqual(writer.calls, ['head 200', 'body 10', 'end']);
  assert.equal(observed.length, 0, 'the writer finishes once its response has left');
  exchange.finish();
  assert.equal(observed[0]!.bytesOut, 10);
});

test("a 101 to an upgrade keeps its Upgrade and Connection; a plain request's 101 is not a response head", () => {
  const upgrade = opened({ kind: 'upgrade' });
  upgrade.exchange.onHeaders({ s: 101, h: ['Upgrade', 'websocket', 'Connection', 'Upgrade'] });
  assert.deepEqual(upgrade.writer.head, { status: 101, headers: ['Upgrade', 'websocket', 'Connection', 'Upgrade'] });
  const plain = opened();
  plain.exchange.onHeaders({ s: 200, h: ['Upgrade', 'websocket', 'Connection', 'Upgrade'] });
  assert.deepEqual(plain.writer.head, { status: 200, headers: [] });
});

test('a malformed head, or one the writer cannot carry, resets the stream and answers 502, observed once', () => {
  for (const [meta, refuseHead] of [
    [{ s: '200', h: [] }, false],
    [{ s: 200, h: ['odd'] }, false],
    [{ s: 200, h: ['X-A', 'a'] }, true],
  ] as const) {
    const { exchange, writer, stream, observed } = opened();
    writer.refuseHead = refuseHead;
    assert.equal(exchange.onHeaders(meta), false);
    assert.deepEqual(stream.calls, [`reset ${ResetCode.UPSTREAM_ERROR}`]);
    assert.deepEqual(writer.calls, ['page 502']);
    assert.match(writer.pages[0]!.body, /invalid response headers/);
    assert.equal(observed.length, 1);
    assert.equal(observed[0]!.status, 502);
  }
});

test('a failure before the head picks its page; after the head it can only close the connection', () => {
  const unreachable = opened();
  unreachable.exchange.failed(ResetCode.UPSTREAM_UNREACHABLE);
  assert.match(unreachable.writer.pages[0]!.body, /could not reach localhost:3000/);
  const gone = opened();
  gone.exchange.failed('SESSION_CLOSED');
  assert.match(gone.writer.pages[0]!.body, /the agent disconnected/);
  const late = opened();
  late.exchange.onHeaders({ s: 200, h: [] });
  late.exchange.failed(ResetCode.UPSTREAM_ERROR);
  assert.deepEqual(late.writer.calls, ['head 200', 'abort']);
  assert.equal(late.observed.length, 1);
  assert.equal(late.observed[0]!.status, 200);
});

test("a body held to its head's Content-Length: a clean end short of it, or bytes past it, cut the response", () => {
  const short = opened();
  short.exchange.onHeaders({ s: 200, h: ['Content-Length', '20'] });
  short.exchange.onData(Buffer.alloc(10));
  short.exchange.onEnd();
  assert.deepEqual(short.writer.calls, ['head 200', 'body 10', 'abort']);
  assert.equal(short.observed.length, 1);

  const long = opened();
  long.exchange.onHeaders({ s: 200, h: ['content-length', '10'] });
  long.exchange.onData(Buffer.alloc(6));
  long.exchange.onData(Buffer.alloc(6));
  long.exchange.onEnd();
  assert.deepEqual(long.writer.calls, ['head 200', 'body 6', 'abort']);
  assert.deepEqual(long.stream.calls, [`reset ${ResetCode.UPSTREAM_ERROR}`]);

  const whole = opened();
  whole.exchange.onHeaders({ s: 200, h: ['content-length', '10'] });
  whole.exchange.onData(Buffer.alloc(10));
  whole.exchange.onEnd();
  assert.deepEqual(whole.writer.calls, ['head 200', 'body 10', 'end']);

  // A 304's length describes a body never sent: its empty end is complete.
  const notModified = opened();
  notModified.exchange.onHeaders({ s: 304, h: ['content-length', '10'] });
  notModified.exchange.onEnd();
  assert.deepEqual(notModified.writer.calls, ['head 304', 'end']);
});

test('a visitor that leaves mid-response has its side cancelled, not failed', () => {
  const left = opened();
  left.exchange.onHeaders({ s: 200, h: [] });
  left.exchange.visitorGone();
  assert.deepEqual(left.writer.calls, ['head 200', 'abort CANCEL']);
  assert.deepEqual(left.stream.calls, [`reset ${ResetCode.CANCEL}`]);
});

test('the quota cuts an exchange off: the crossing chunk is not forwarded; 429 before the head, a closed connection after', () => {
  const download = opened({ quota: 15 });
  download.exchange.onHeaders({ s: 200, h: [] });
  download.exchange.onData(Buffer.alloc(10));
  download.exchange.onData(Buffer.alloc(10));
  download.exchange.onData(Buffer.alloc(10));
  assert.deepEqual(download.writer.calls, ['head 200', 'body 10', 'abort']);
  assert.deepEqual(download.stream.calls, [`reset ${ResetCode.CANCEL}`]);
  assert.deepEqual(download.metered, [10, 10], 'nothing is metered after the cut');
  assert.equal(download.observed.length, 1);

  const upload = opened({ quota: 5 });
  assert.equal(upload.exchange.uploaded(4), true);
  assert.equal(upload.exchange.uploaded(4), false);
  assert.deepEqual(upload.writer.calls, ['page 429']);
  assert.equal(upload.observed[0]!.bytesIn, 8);
});

test('a session that cannot open a stream gets the offline page', () => {
  const observed: Exchange[] = [];
  const exchange = new EdgeExchange(
    { host: 'app.example.com', method: 'GET', path: '/', ip: '', userAgent: '', proto: 'HTTP/2.0', secure: false, absolute: undefined },
    { observe: (record) => observed.push(record), meter: undefined },
  );
  const writer = new RecordingWriter();
  exchange.respondThrough(writer);
  exchange.binding = { tunnelId: 't1', accountId: 'a1', local: 'localhost:3000', session: { mux: {} } } as unknown as Binding;
  const result = exchange.open({ rawHeaders: [], method: 'GET', url: '/' }, 'request', false, () => {
    throw new Error('session is closed');
  });
  assert.equal(result, undefined);
  assert.deepEqual(writer.calls, ['page 404']);
  assert.equal(observed[0]!.status, 404);
});

test('a visitor that leaves cancels the stream and finishes the exchange once', () => {
  const { exchange, stream, observed } = opened();
  exchange.onHeaders({ s: 200, h: [] });
  exchange.visitorGone();
  exchange.visitorGone();
  assert.equal(stream.calls[0], `reset ${ResetCode.CANCEL}`);
  assert.equal(observed.length, 1);
});

test('a plain request asks for 1xx heads; they reach the writer filtered, before the final head only', () => {
  const { exchange, writer, sent } = opened();
  assert.equal(sent[0]!.i, 1);
  exchange.onInfo({ s: 103, h: ['Link', '</a.css>; rel=preload', 'Connection', 'close'] });
  exchange.onInfo({ s: 101, h: [] });
  exchange.onInfo({ s: 200, h: [] });
  exchange.onInfo({ s: 'x', h: [] });
  exchange.onHeaders({ s: 200, h: [] });
  exchange.onInfo({ s: 103, h: [] });
  assert.deepEqual(writer.calls, ['interim 103 Link </a.css>; rel=preload', 'head 200']);
  const upgrade = opened({ kind: 'upgrade' });
  assert.equal(upgrade.sent[0]!.i, undefined);
  upgrade.exchange.onInfo({ s: 103, h: [] });
  assert.deepEqual(upgrade.writer.calls, []);
});

test('Expect: 100-continue goes to an agent that relays 1xx heads; for another the edge answers 100 itself', () => {
  const expecting = ['Host', 'app.example.com', 'Expect', '100-continue'];
  const relayed = opened({ rawHeaders: expecting, expectContinue: true, features: ['info'] });
  assert.ok(relayed.sent[0]!.h.includes('Expect'));
  assert.deepEqual(relayed.writer.calls, []);
  const old = opened({ rawHeaders: expecting, expectContinue: true });
  assert.ok(!old.sent[0]!.h.includes('Expect'));
  assert.deepEqual(old.writer.calls, ['interim 100']);
  const unasked = opened({ rawHeaders: expecting, features: ['info'] });
  assert.ok(!unasked.sent[0]!.h.includes('Expect'), 'Expect without a body waiting for it is dropped');
});

test("the origin's trailers reach the writer checked; without any the body just ends", () => {
  const { exchange, writer, stream } = opened();
  exchange.onHeaders({ s: 200, h: [] });
  stream.trailers = ['Grpc-Status', '0', 'Content-Length', '5', 'bad name', 'x'];
  exchange.onEnd();
  assert.deepEqual(writer.calls, ['head 200', 'end grpc-status 0']);
});

test('an answer complete while the upload flows stops the upload once and resets the stream with NO_ERROR', () => {
  const { exchange, writer, stream } = opened();
  exchange.uploaded(7);
  exchange.onHeaders({ s: 413, h: [] });
  exchange.onEnd();
  exchange.responded(true);
  exchange.responded(true);
  assert.deepEqual(writer.calls, ['head 413', 'end', 'stop upload 7']);
  assert.deepEqual(stream.calls, [`reset ${ResetCode.NO_ERROR}`]);
  const whole = opened();
  whole.exchange.responded(false);
  assert.deepEqual(whole.stream.calls, []);
});

test('body bytes before the response head reset the stream and answer 502, never reaching the visitor', () => {
  const { exchange, writer, stream, observed } = opened();
  exchange.onData(Buffer.from('HTTP/1.1 200 OK\r\n\r\n'));
  assert.deepEqual(stream.calls, [`reset ${ResetCode.UPSTREAM_ERROR}`]);
  assert.deepEqual(writer.calls, ['page 502']);
  assert.match(writer.pages[0]!.body, /a response body before its head/);
  assert.equal(observed[0]!.bytesOut, 0);
});
