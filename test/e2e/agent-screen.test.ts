import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { SVC_VERSION } from '@svcrouter/protocol';
import { requireTools } from '@svcrouter/testkit/tools';
import { AGENT_BIN, startOrigin, startServer, tempDir, visit, type TestOrigin, type TestServer } from './harness/index.js';

const run = promisify(execFile);
/** How often the pane is read while waiting for something to appear on it. */
const PANE_POLL_MS = 100;

// The live screen in a real pseudo-terminal: tmux gives the agent a TTY and reads the screen back.
if (requireTools('the live screen in tmux', ['tmux'], 'tmux')) {
  describe('the live screen on a terminal', () => {
    let server: TestServer;
    let origin: TestOrigin;
    let temp: Awaited<ReturnType<typeof tempDir>>;
    let socket: string;
    const tmux = async (...args: string[]) => (await run('tmux', ['-S', socket, ...args])).stdout;

    before(async () => {
      server = await startServer();
      origin = await startOrigin();
      temp = await tempDir('svc-screen-');
      socket = path.join(temp.dir, 'tmux.sock');
    });
    after(async () => {
      await tmux('kill-server').catch(() => undefined);
      await origin?.close();
      await server?.close();
      await temp?.remove();
    });

    /** Reads the pane until `pattern` shows; the test runner's timeout bounds the wait. */
    async function waitForPane(pattern: RegExp): Promise<RegExpMatchArray> {
      for (;;) {
        const match = (await tmux('capture-pane', '-p', '-t', 'agent')).match(pattern);
        if (match) return match;
        await delay(PANE_POLL_MS);
      }
    }

    it('shows the URL and each request, and Ctrl-C gives the terminal back as it was, exit 0', async () => {
      const command = [
        'echo BEFORE-THE-AGENT;',
        `SVC_TOKEN=${server.token} SVC_SERVER=${server.url} ${process.execPath} ${AGENT_BIN} http ${origin.port};`,
        'echo AGENT-EXIT=$?',
      ].join(' ');
      await tmux('new-session', '-d', '-s', 'agent', '-x', '90', '-y', '30', 'bash', '--norc', '-c', command);
      await tmux('set-option', '-t', 'agent', 'remain-on-exit', 'on');
      const url = await waitForPane(/Forwarding\s+(https:\/\/([a-z0-9]+\.localhost):\d+) -> http:\/\/localhost:\d+/);
      assert.equal(await tmux('display', '-p', '-t', 'agent', '#{alternate_on}'), '1\n', 'drawn in the alternate screen');
      await waitForPane(/Session Status\s+online/);
      await waitForPane(/Account\s+local@svcrouter\.localhost \(Plan: free/);
      await waitForPane(new RegExp(`Version\\s+${SVC_VERSION.replace(/\./g, '\\.')}\\s*\n`));
      await waitForPane(/Web Interface\s+http:\/\/127\.0\.0\.1:\d+\s*\n/);
      // The round trip is measured on the heartbeats: a figure once the first one came back.
      await waitForPane(/Latency\s+\d+ms\s*\n/);

      assert.equal((await visit(server, url[2]!, '/hello')).status, 200);
      assert.equal((await visit(server, url[2]!, '/status/503')).status, 503);
      await waitForPane(/\d\d:\d\d:\d\d\.\d{3} GET\s+\/hello\s+200\s+\d+ms/);
      await waitForPane(/GET\s+\/status\/503\s+503/);
      await waitForPane(/Connections\s+total\s+open\s+rate\/s\n\s+2\s/);
      // Coloured by status class, as the terminal received it: 2xx green (SGR 32), 5xx red (SGR 31).
      const coloured = await tmux('capture-pane', '-p', '-e', '-t', 'agent');
      assert.match(coloured, /\/hello.*\u001b\[32m200\u001b\[39m/);
      assert.match(coloured, /\/status\/503.*\u001b\[31m503\u001b\[39m/);
      const lines = (await tmux('capture-pane', '-p', '-t', 'agent')).split('\n');
      assert.ok(
        lines.every((line) => line.length <= 90),
        'every line fits the width',
      );

      await tmux('send-keys', '-t', 'agent', 'C-c');
      const end = await waitForPane(/AGENT-EXIT=(\d+)/);
      assert.equal(end[1], '0');
      // Scrollback and screen together: under load the last line may have scrolled into history.
      const terminal = await tmux('capture-pane', '-p', '-S', '-', '-t', 'agent');
      assert.match(terminal, /^BEFORE-THE-AGENT\nAGENT-EXIT=0\n/, 'what was there before is back, and nothing of the screen is left');
      assert.doesNotMatch(terminal, /Session Status|Forwarding/);
      assert.equal(await tmux('display', '-p', '-t', 'agent', '#{alternate_on}'), '0\n');
    });
  });
}
