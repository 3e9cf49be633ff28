import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PassThrough } from 'node:stream';
import { readSecret, type SecretInput } from './read-secret.js';

/** A stand-in terminal: records raw-mode switches; the test types into it. */
function fakeTerminal(): SecretInput & PassThrough & { rawModes: boolean[] } {
  const stream = new PassThrough() as PassThrough & { isTTY: boolean; setRawMode(raw: boolean): void; rawModes: boolean[] };
  stream.isTTY = true;
  stream.rawModes = [];
  stream.setRawMode = (raw) => void stream.rawModes.push(raw);
  return stream;
}

function collect(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString('utf8')));
  return { stream, text: () => text };
}

describe('readSecret', () => {
  it('piped input: the first line, without its line ending; the rest is ignored', async () => {
    const input = new PassThrough();
    const out = collect();
    const read = readSecret(input, out.stream, 'Password: ');
    input.end('first secret\r\nsecond line\n');
    assert.equal(await read, 'first secret');
    assert.equal(out.text(), '', 'no prompt when the input is not a terminal');
  });

  it('piped input that ends without a line is undefined; a last line without newline counts', async () => {
    const empty = new PassThrough();
    const none = readSecret(empty, collect().stream, '');
    empty.end();
    assert.equal(await none, undefined);
    const partial = new PassThrough();
    const last = readSecret(partial, collect().stream, '');
    partial.end('no newline');
    assert.equal(await last, 'no newline');
  });

  it('a terminal: prompts, reads in raw mode without echo, handles backspace, restores the mode', async () => {
    const terminal = fakeTerminal();
    const out = collect();
    const read = readSecret(terminal, out.stream, 'Password: ');
    terminal.write('hunter');
    terminal.write('\u007f\u007fer22\r');
    assert.equal(await read, 'hunter22');
    assert.deepEqual(terminal.rawModes, [true, false]);
    assert.equal(out.text(), 'Password: \n', 'nothing typed is echoed');
  });

  it('a terminal: Ctrl-C gives up', async () => {
    const terminal = fakeTerminal();
    const read = readSecret(terminal, collect().stream, '');
    terminal.write('abc\u0003');
    assert.equal(await read, undefined);
    assert.deepEqual(terminal.rawModes, [true, false]);
  });
});
