import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import type { IpcReply } from './ipc.js';

const IPC_MODULE = new URL('./ipc.ts', import.meta.url).href;

/**
 * A child that serves one command, `echo`, and then says `ready`: the state of a probe process
 * that has loaded and waits for its parent's first command with nothing else to do.
 */
function serveInChild(holdProcess: boolean): ChildProcess {
  const code = `
    import { serveIpc } from ${JSON.stringify(IPC_MODULE)};
    serveIpc({ echo: (request) => request.text }, { holdProcess: ${holdProcess} });
    process.send('ready');
  `;
  return fork('--input-type=module', ['-e', code], { execArgv: ['--import', 'tsx'] });
}

/** The child's first message. */
async function ready(child: ChildProcess): Promise<void> {
  const [message] = (await once(child, 'message')) as [unknown];
  assert.equal(message, 'ready');
}

describe('serveIpc', () => {
  it('with holdProcess, keeps an idle probe alive to answer a command sent after it is ready, and ends with the channel', async () => {
    const child = serveInChild(true);
    await ready(child);
    // The child is idle now: without the channel holding it, it would already be on its way out.
    const answered = new Promise<IpcReply>((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`the probe exited (code ${code}) before it answered`)));
    });
    child.send({ id: 1, cmd: 'echo', text: 'still here' });
    assert.deepEqual(await answered, { id: 1, result: 'still here' });
    const exited = once(child, 'exit');
    child.disconnect();
    assert.deepEqual(await exited, [0, null]);
  });

  it('without it, leaves an idle process free to end on its own (a probe preloaded into a server)', async () => {
    const child = serveInChild(false);
    const exited = once(child, 'exit');
    await ready(child);
    assert.deepEqual(await exited, [0, null]);
  });
});
