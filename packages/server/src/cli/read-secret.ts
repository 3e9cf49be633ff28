import { createInterface } from 'node:readline';

/** What readSecret reads from: process.stdin, or a stream in tests. */
export type SecretInput = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const BACKSPACES = new Set(['\u007f', '\b']);

/**
 * One secret line: typed at a terminal without echo (after `prompt` on `promptOut`), or the
 * first line of piped input. Undefined when input ends first or the person presses Ctrl-C.
 */
export function readSecret(input: SecretInput, promptOut: NodeJS.WritableStream, prompt: string): Promise<string | undefined> {
  if (input.isTTY && input.setRawMode) return readFromTerminal(input, promptOut, prompt);
  return readFirstLine(input);
}

function readFirstLine(input: NodeJS.ReadableStream): Promise<string | undefined> {
  return new Promise((resolve) => {
    const lines = createInterface({ input, crlfDelay: Infinity, terminal: false });
    let line: string | undefined;
    lines.once('line', (first) => {
      line = first;
      lines.close();
    });
    lines.once('close', () => resolve(line));
  });
}

// Raw mode delivers keys as typed and echoes nothing, so the password never shows on screen.
function readFromTerminal(input: SecretInput, promptOut: NodeJS.WritableStream, prompt: string): Promise<string | undefined> {
  promptOut.write(prompt);
  input.setRawMode!(true);
  input.setEncoding?.('utf8');
  input.resume();
  return new Promise((resolve) => {
    let typed = '';
    const finish = (value: string | undefined): void => {
      input.off('data', onData);
      input.setRawMode!(false);
      input.pause();
      promptOut.write('\n');
      resolve(value);
    };
    const onData = (chunk: string | Buffer): void => {
      for (const ch of String(chunk)) {
        if (ch === '\r' || ch === '\n') return finish(typed);
        if (ch === CTRL_C || ch === CTRL_D) return finish(undefined);
        if (BACKSPACES.has(ch)) typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    input.on('data', onData);
  });
}
