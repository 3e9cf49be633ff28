import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Messages, SVC_VERSION } from '@svcrouter/protocol';
import type { InspectedRequest } from '@svcrouter/sdk';
import {
  Proc,
  REPO_ROOT,
  splitFailure,
  startOrigin,
  startServer,
  tempDir,
  visit,
  type TestOrigin,
  type TestServer,
} from './harness/index.js';

// The agent as one executable (scripts/build-agent-binary.mjs), run as someone who downloaded
// it: copied out of the repository, with an empty PATH (no node to fall back on), a fresh HOME
// and only the SVC_* variables it needs. It opens a tunnel through a real svc-server over TLS.

const run = promisify(execFile);
const BUILD_SCRIPT = path.join(REPO_ROOT, 'scripts/build-agent-binary.mjs');
const BINARY = path.join(REPO_ROOT, 'dist-bin', `svc-${process.platform}-${process.arch}`);
/** What the executable is built from: it is rebuilt when any of them is newer. */
const SOURCES = [
  'packages/agent/dist',
  'packages/sdk/dist',
  'packages/protocol/dist',
  'packages/agent/inspector-ui',
  'scripts/build-agent-binary.mjs',
];
const UI_DIR = path.join(REPO_ROOT, 'packages/agent/inspector-ui');

/** The newest modification time among `SOURCES`, in milliseconds. */
async function newestSource(): Promise<number> {
  let newest = 0;
  for (const source of SOURCES) {
    const full = path.join(REPO_ROOT, source);
    const files = (await stat(full)).isDirectory()
      ? (await readdir(full, { recursive: true })).map((file) => path.join(full, file))
      : [full];
    for (const file of files) newest = Math.max(newest, (await stat(file)).mtimeMs);
  }
  return newest;
}

/** Builds the executable unless one newer than everything it is built from exists (about 6 s). */
async function ensureBinary(): Promise<void> {
  const built = await stat(BINARY).catch(() => undefined);
  if (built && built.mtimeMs >= (await newestSource())) return;
  await run(process.execPath, [BUILD_SCRIPT], { cwd: REPO_ROOT });
}

// Node builds an executable for its own platform; the build script refuses others. CI runs on
// Linux and must never skip this.
const skip = process.platform !== 'linux' && process.env.CI !== 'true' ? 'the single executable is built on Linux only' : false;

describe('the agent as a single executable', { skip }, () => {
  let server: TestServer;
  let origin: TestOrigin;
  let home: Awaited<ReturnType<typeof tempDir>>;
  let svc: string;

  before(async () => {
    [server, origin, home] = await Promise.all([startServer(), startOrigin(), tempDir('svc-binary-'), ensureBinary()]);
    await mkdir(path.join(home.dir, 'bin'));
    svc = path.join(home.dir, 'bin', 'svc');
    await copyFile(BINARY, svc);
  });
  after(async () => {
    await origin?.close();
    await server?.close();
    await home?.remove();
  });

  /** Starts the copied executable with nothing in its environment but PATH='', HOME and `env`. */
  function spawnSvc(args: string[], env: Record<string, string> = {}): Proc {
    const child = spawn(svc, args, { cwd: home.dir, env: { PATH: '', HOME: home.dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    return new Proc(child, 'svc executable', { echo: Boolean(process.env.SVC_E2E_VERBOSE) });
  }

  it('svc version prints the agent version and nothing else (no experimental warning)', async () => {
    const proc = spawnSvc(['version']);
    assert.deepEqual(await proc.exited, { code: 0, signal: null });
    assert.deepEqual(proc.lines, [`svc ${SVC_VERSION}`]);
    assert.deepEqual(proc.stderrLines, []);
  });

  it('opens a tunnel over TLS with SVC_CA_FILE, forwards a visit and serves the inspector from inside itself', async () => {
    const proc = spawnSvc(['http', String(origin.port), '--inspect-addr', '127.0.0.1:0'], {
      SVC_TOKEN: server.token!,
      SVC_SERVER: `https://localhost:${server.httpsPort}`,
      SVC_CA_FILE: server.caPath,
    });
    try {
      const hostname = (await proc.waitForLine(/^Forwarding https:\/\/(\S+?):\d+ -> http:\/\/localhost:\d+$/))[1]!;
      const inspector = (await proc.waitForLine(/^Inspector (http:\/\/127\.0\.0\.1:\d+)$/))[1]!;

      const visited = await visit(server, hostname, '/echo?via=executable', { secure: true, method: 'POST', body: 'from a visitor' });
      assert.equal(visited.status, 200);
      const echo = JSON.parse(visited.text) as { method: string; url: string; bodyLength: number };
      assert.deepEqual(echo, { ...echo, method: 'POST', url: '/echo?via=executable', bodyLength: 'from a visitor'.length });

      // The web UI's files are assets inside the executable; nothing of the repository is read.
      for (const [route, file] of [
        ['/', 'index.html'],
        ['/app.js', 'app.js'],
        ['/app.css', 'app.css'],
      ] as const) {
        const response = await fetch(`${inspector}${route}`);
        assert.equal(response.status, 200, route);
        assert.equal(await response.text(), await readFile(path.join(UI_DIR, file), 'utf8'), route);
      }
      // The request line is printed once the exchange is over, which is when it is captured.
      await proc.waitForLine(/POST \/echo\S* 200/);
      const listed = (await (await fetch(`${inspector}/api/requests`)).json()) as { requests: InspectedRequest[] };
      assert.ok(
        listed.requests.some((request) => request.path === '/echo?via=executable' && request.status === 200),
        JSON.stringify(listed.requests),
      );
    } finally {
      assert.equal((await proc.kill('SIGINT')).code, 0, proc.output);
    }
  });

  it('a token the server does not know: exit 1 with the invalid-token sentence and a hint', async () => {
    const proc = spawnSvc(['http', String(origin.port)], {
      SVC_TOKEN: `svc_${'A'.repeat(43)}`,
      SVC_SERVER: server.url,
    });
    assert.equal((await proc.exited).code, 1, proc.output);
    assert.deepEqual(proc.lines, []);
    assert.equal(splitFailure(proc.stderrLines.join('\n')).sentence, Messages.TOKEN_INVALID);
  });
});
