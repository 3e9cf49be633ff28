import assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { requestEvent } from './output-json.js';
import { printable, terminalOutput } from './output.js';

/** A stdout that records each write(2) the agent would make. */
function recordingStream(): { stream: PassThrough; writes: string[] } {
  const writes: string[] = [];
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => writes.push(chunk.toString()));
  return { stream, writes };
}

const VIEW = { name: '', url: 'https://a.localhost', local: 'http://localhost:3000' };
const request = (path: string) => ({ method: 'GET', path, status: 200, durationMs: 1.4 });

test('a request line after a quiet spell is written in the same loop turn', async () => {
  const out = recordingStream();
  const output = terminalOutput(out.stream, new PassThrough());
  output.request(VIEW, request('/one'));
  assert.equal(out.writes.length, 0, 'held until the check phase');
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(out.writes.length, 1);
  assert.match(out.writes[0]!, /^\d\d:\d\d:\d\d\.\d{3} GET \/one 200 1ms\n$/);
});

test('a burst of request lines right after a write is joined into one write, in order', async () => {
  const out = recordingStream();
  const output = terminalOutput(out.stream, new PassThrough());
  output.request(VIEW, request('/first'));
  output.flush();
  for (let i = 0; i < 100; i++) output.request(VIEW, request(`/burst/${i}`));
  await once(out.stream, 'data');
  assert.equal(out.writes.length, 2, 'the first line, then the burst in one write');
  const burst = out.writes[1]!.trimEnd().split('\n');
  assert.equal(burst.length, 100);
  burst.forEach((line, i) => assert.ok(line.includes(` GET /burst/${i} `), line));
});

test('any other line writes the held request lines first, so stdout keeps its order', () => {
  const out = recordingStream();
  const output = terminalOutput(out.stream, new PassThrough());
  output.request(VIEW, request('/before'));
  output.info('Tunnel released');
  const text = out.writes.join('');
  assert.ok(text.indexOf('/before') < text.indexOf('Tunnel released'), text);
});

test('flush() writes held lines at once and cancels the pending write', async () => {
  const out = recordingStream();
  const output = terminalOutput(out.stream, new PassThrough());
  output.request(VIEW, request('/a'));
  output.flush();
  assert.equal(out.writes.length, 1);
  output.flush();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(out.writes.length, 1, 'nothing written twice, no empty write');
});

test('a JSON request event is what JSON.stringify writes for the same fields', () => {
  const view = { name: '', url: 'https://a "quoted" example', local: 'http://localhost:3000' };
  for (const [nowMs, path, durationMs] of [
    [Date.UTC(2026, 11, 5, 9, 30, 1, 7), '/a?b="c"&d=\u00e9\n', 1.26],
    [Date.UTC(2026, 11, 5, 9, 30, 1, 57), '/', 0],
    [Date.UTC(2026, 11, 5, 9, 30, 2, 999), '/x', 1234.56],
  ] as const) {
    const log = { method: 'GET', path, status: 200, durationMs };
    const expected = JSON.stringify({
      event: 'request',
      time: new Date(nowMs).toISOString(),
      tunnel: view.url,
      method: log.method,
      path: log.path,
      status: log.status,
      durationMs: Math.round(log.durationMs * 10) / 10,
    });
    assert.equal(requestEvent(view, log, nowMs), `${expected}\n`);
  }
});

test("a request line shows a visitor's control characters as %XX, so they cannot drive the terminal", () => {
  const out = recordingStream();
  const output = terminalOutput(out.stream, new PassThrough());
  // U+009D (OSC) … U+009C (ST) would set the clipboard on xterm; CR would hide the line's start.
  output.request(VIEW, { method: 'GET', path: '/x\u009d52;c;aGk=\u009c\ry\u001b[2J', status: 400, durationMs: 1 });
  output.flush();
  const line = out.writes.join('');
  assert.match(line, /^\d\d:\d\d:\d\d\.\d{3} GET \/x%9D52;c;aGk=%9C%0Dy%1B\[2J 400 1ms\n$/);
  assert.equal(printable('/plain/päth?q=1'), '/plain/päth?q=1', 'printable characters pass as they are');
});

test('a JSON request event writes DEL and C1 controls as \\u escapes: the same path once parsed, nothing a terminal obeys', () => {
  const path = '/j\u009b2J\u009d0;t\u009c\u007f"\\\u0085';
  const line = requestEvent(VIEW, { method: 'GET', path, status: 400, durationMs: 1 });
  assert.doesNotMatch(line.trimEnd(), /[\u0000-\u001f\u007f-\u009f]/);
  assert.ok(line.includes('"path":"/j\\u009b2J\\u009d0;t\\u009c\\u007f\\"\\\\\\u0085"'), line);
  assert.equal((JSON.parse(line) as { path: string }).path, path);
});
