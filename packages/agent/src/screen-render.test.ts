import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ScreenModel } from './screen-model.js';
import { fit, renderScreen } from './screen-render.js';

const view = { name: '', url: 'https://abcdefghij.localhost:8443', local: 'http://localhost:3000' };

function model(requests: number): ScreenModel {
  const screen = new ScreenModel();
  screen.state = 'online';
  screen.tunnels = [view];
  for (let i = 0; i < requests; i++)
    screen.addRequest(view, { method: 'GET', path: `/${'p'.repeat(80)}/${i}`, status: 200 + i, durationMs: 3 });
  return screen;
}

test('every line fits the width, paths give way first, and the list fits the height', () => {
  const text = renderScreen(model(40), { columns: 60, rows: 24 }, false);
  const lines = text.split('\n');
  assert.ok(
    lines.every((line) => line.length <= 60),
    text,
  );
  assert.equal(lines.length, 23, 'one line left for the cursor');
  assert.match(text, /\nForwarding\s+https:\/\/abcdefghij\.localhost:8443 -> http:\/…\n/);
  // Newest first, each with its status and duration even when the path is cut.
  assert.match(
    lines.find((line) => line.includes('GET'))!,
    /GET\s+\/p+…\s*239\s+3ms$/,
  );
});

test('statuses are coloured by class when colour is on', () => {
  const screen = new ScreenModel();
  screen.tunnels = [view];
  for (const status of [200, 302, 404, 502]) screen.addRequest(view, { method: 'GET', path: '/', status, durationMs: 1 });
  const text = renderScreen(screen, { columns: 100, rows: 40 }, true);
  // green, cyan, yellow, red (SGR 32, 36, 33, 31)
  for (const [code, status] of [
    [32, 200],
    [36, 302],
    [33, 404],
    [31, 502],
  ]) {
    assert.ok(text.includes(`\u001b[${code}m${status}\u001b[39m`), `${status} in colour ${code}`);
  }
});

test('the rate counts the last minute only', () => {
  const screen = new ScreenModel();
  screen.addRequest(view, { method: 'GET', path: '/', status: 200, durationMs: 1 }, 0);
  screen.addRequest(view, { method: 'GET', path: '/', status: 200, durationMs: 1 }, 30_000);
  assert.equal(screen.rate(40_000), 2 / 60);
  assert.equal(screen.rate(65_000), 1 / 60);
  assert.equal(fit('abcdef', 4), 'abc…');
});

test("a visitor's control characters in the method or path reach the screen as %XX, never as controls", () => {
  const screen = new ScreenModel();
  screen.state = 'online';
  // An HTTP/2 :path's bytes 0x80–0xff arrive as U+0080–U+00FF: U+009B is CSI, U+009D is OSC.
  screen.addRequest(view, { method: 'G\u001bT', path: '/a\u009b2J\u009d52;c;aGk=\u009c\u0085b\u0007', status: 400, durationMs: 1 });
  const text = renderScreen(screen, { columns: 120, rows: 24 }, false);
  assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  assert.match(text, /G%1BT\s+\/a%9B2J%9D52;c;aGk=%9C%85b%07\s+400/);
});
