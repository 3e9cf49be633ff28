import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { SVC_VERSION } from '@svcrouter/protocol';
import { REPO_ROOT, spawnNode, startOrigin, startServer, tempDir, visit, type TestServer } from './harness/index.js';

// The agent-side packages as a user gets them: `npm pack`ed, installed from the tarballs alone
// into an empty folder outside the repository (nothing else of ours can come in), then
// `svc version`, a typed example compiled against the installed declarations, an example
// that forwards a port and calls the REST API of a real server, and `npm i -g` of the agent.

const run = promisify(execFile);
const PACKAGES = ['protocol', 'sdk', 'agent'] as const;
// The compiler the build uses; `typescript` itself is the 6.0 API that typescript-eslint loads.
const TSC = path.join(REPO_ROOT, 'node_modules/@typescript/native/bin/tsc');
/**
 * What the SDK and protocol may depend on: each other, and re2js, the pure-JS RE2 engine that
 * checks and runs traffic rules' regexes (the agent checks a rule with the engine the edge runs).
 */
const SDK_DEPENDENCIES = ['@svcrouter/protocol', '@svcrouter/sdk', 're2js'];
/** The agent adds its live screen (log-update, ansi-escapes, picocolors) and config file (yaml, zod) libraries. */
// ws: svc doctor's WebSocket echo through the public URL (Node 20 has no WebSocket client without a flag).
const AGENT_DEPENDENCIES = [...SDK_DEPENDENCIES, 'ansi-escapes', 'log-update', 'picocolors', 'ws', 'yaml', 'zod'];

/** The environment without npm's per-run variables (they name this repository) or SVC_*. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('npm_') && !key.startsWith('SVC_') && key !== 'NODE_PATH' && key !== 'NODE_OPTIONS') env[key] = value;
  }
  return { ...env, ...extra };
}

const EXAMPLE = `import http from 'node:http';
import { ApiClient, forward } from '@svcrouter/sdk';

const local = http.createServer((req, res) => res.end('hello')).listen(0, '127.0.0.1');
await new Promise((resolve) => local.once('listening', resolve));
// Token and server come from SVC_TOKEN and SVC_SERVER.
const tunnel = await forward({ addr: local.address().port });
const client = new ApiClient();
const tunnels = await client.tunnels.list();
console.log(JSON.stringify({
  resolved: import.meta.resolve('@svcrouter/sdk'),
  url: tunnel.url,
  listed: tunnels.some((t) => t.id === tunnel.id && t.status === 'online'),
  email: (await client.me()).email,
}));
await tunnel.close();
local.close();
`;

const TYPED_EXAMPLE = `import { ApiClient, ApiError, ErrorCode, SvcError, type CapturedRequest } from '@svcrouter/sdk';

export async function notFound(client: ApiClient): Promise<CapturedRequest[]> {
  const page = await client.requests.list({ status: 404, limit: 10 });
  // @ts-expect-error status is a number: proves the declarations were read, not taken as any
  await client.requests.list({ status: true });
  return page.requests;
}
export function describe(error: unknown): string {
  if (error instanceof ApiError) return error.status + ' ' + error.code;
  if (error instanceof SvcError && error.code === ErrorCode.TUNNEL_LIMIT) return error.message;
  return String(error);
}
`;

describe('packed agent-side packages installed from their tarballs', () => {
  let work: { dir: string; remove(): Promise<void> };
  let app: string;
  let server: TestServer;
  const tarballs: string[] = [];

  before(async () => {
    work = await tempDir('svc-pack-');
    server = await startServer();
    for (const name of PACKAGES) {
      const { stdout } = await run('npm', ['pack', '--pack-destination', work.dir, '--json'], {
        cwd: path.join(REPO_ROOT, 'packages', name),
        env: cleanEnv(),
      });
      const [packed] = JSON.parse(stdout) as Array<{ filename: string }>;
      tarballs.push(path.join(work.dir, packed!.filename));
    }
    app = path.join(work.dir, 'app');
    await mkdir(app);
    await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'pack-check', private: true, type: 'module' }));
    // The three tarballs and the agent's few libraries are all it takes; the first test checks
    // that nothing else came in. Prefer-offline, not offline: the repository's install runs from
    // its lock file, which caches the libraries' tarballs but not the registry's metadata that an
    // install without a lock file resolves versions from, so a fresh machine has to ask once.
    await run('npm', ['install', '--prefer-offline', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', ...tarballs], {
      cwd: app,
      env: cleanEnv(),
    });
  });
  after(async () => {
    await server?.close();
    await work?.remove();
  });

  it('installs the three packages; the SDK and protocol depend on nothing but re2js, the agent on its terminal and config libraries; no native module or test file', async () => {
    assert.deepEqual((await readdir(path.join(app, 'node_modules/@svcrouter'))).sort(), ['agent', 'protocol', 'sdk']);
    for (const name of PACKAGES) {
      const folder = path.join(app, 'node_modules/@svcrouter', name);
      const manifest = JSON.parse(await readFile(path.join(folder, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
        type?: string;
      };
      assert.equal(manifest.type, 'module', `${name} is ESM`);
      const allowed = name === 'agent' ? AGENT_DEPENDENCIES : SDK_DEPENDENCIES;
      for (const dependency of Object.keys(manifest.dependencies ?? {}))
        assert.ok(allowed.includes(dependency), `${name} depends on ${dependency}`);
      const files = await readdir(folder, { recursive: true });
      assert.deepEqual(
        files.filter((file) => /\.test\.|test-support/.test(file)),
        [],
        `${name} ships tests`,
      );
    }
    const agentFiles = await readdir(path.join(app, 'node_modules/@svcrouter/agent'), { recursive: true });
    assert.ok(
      ['index.html', 'app.js', 'app.css'].every((file) => agentFiles.includes(path.join('inspector-ui', file))),
      'the agent ships the inspector UI',
    );
    const everything = await readdir(path.join(app, 'node_modules'), { recursive: true });
    assert.deepEqual(
      everything.filter((file) => file.endsWith('.node')),
      [],
      'no native module anywhere',
    );
    const sdkFiles = await readdir(path.join(app, 'node_modules/@svcrouter/sdk'), { recursive: true });
    assert.ok(
      sdkFiles.includes('README.md') && sdkFiles.includes(path.join('dist', 'index.d.ts')),
      'the SDK ships its README and declarations',
    );
  });

  it('svc version runs from the installed agent', async () => {
    const { stdout } = await run(path.join(app, 'node_modules/.bin/svc'), ['version'], { cwd: app, env: cleanEnv() });
    assert.equal(stdout.trim(), `svc ${SVC_VERSION}`);
  });

  it('a TypeScript program type-checks against the installed declarations', async () => {
    await writeFile(path.join(app, 'typed.ts'), TYPED_EXAMPLE);
    const flags = [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--skipLibCheck',
    ];
    await run(process.execPath, [TSC, ...flags, 'typed.ts'], { cwd: app, env: cleanEnv() }).catch((error: { stdout: string }) =>
      assert.fail(error.stdout),
    );
  });

  it('an example forwards a port and calls the REST API of a real server', async () => {
    await writeFile(path.join(app, 'example.mjs'), EXAMPLE);
    const { stdout } = await run(process.execPath, ['example.mjs'], {
      cwd: app,
      env: cleanEnv({ SVC_TOKEN: server.token!, SVC_SERVER: server.url }),
    });
    const result = JSON.parse(stdout) as { resolved: string; url: string; listed: boolean; email: string };
    assert.ok(result.resolved.startsWith(`file://${app}/node_modules/@svcrouter/sdk/`), result.resolved);
    assert.match(result.url, /^https:\/\/[a-z0-9-]+\.localhost:\d+$/);
    assert.equal(result.listed, true);
    assert.equal(result.email, 'local@svcrouter.localhost');
  });

  it('npm i -g from the tarballs: the global svc runs `svc version` and forwards a port with --host-header rewrite', async () => {
    const prefix = path.join(work.dir, 'global');
    await run(
      'npm',
      ['install', '--global', '--prefix', prefix, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', ...tarballs],
      {
        cwd: work.dir,
        env: cleanEnv(),
      },
    );
    const svc = path.join(prefix, 'bin', 'svc');
    assert.ok((await realpath(svc)).startsWith(path.join(prefix, 'lib', 'node_modules', '@svcrouter', 'agent') + path.sep));
    assert.equal((await run(svc, ['version'], { cwd: work.dir, env: cleanEnv() })).stdout.trim(), `svc ${SVC_VERSION}`);

    const origin = await startOrigin();
    const agent = spawnNode(
      svc,
      ['http', String(origin.port), '--host-header', 'rewrite', '--log', 'stdout', '--inspect=false'],
      { SVC_TOKEN: server.token!, SVC_SERVER: server.url },
      'global svc',
    );
    try {
      const [, url, hostname] = (await agent.waitForLine(/^Forwarding (https:\/\/([a-z0-9]+\.localhost):\d+) -> http:\/\/localhost:\d+$/))!;
      assert.ok(url);
      assert.equal((await visit(server, hostname!, '/through-the-global-svc')).status, 200);
      await agent.waitForLine(/ GET \/through-the-global-svc 200 \d+ms$/);
      assert.equal(origin.seen.at(-1)!.headers.host, `localhost:${origin.port}`, 'the local host, rewritten');
      assert.deepEqual(await agent.kill('SIGINT'), { code: 0, signal: null });
    } finally {
      await agent.kill('SIGKILL');
      await origin.close();
    }
  });
});
