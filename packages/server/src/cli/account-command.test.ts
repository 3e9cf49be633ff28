import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { consumeSignInLink, DashboardSessions, verifyPassword } from '../auth/index.js';
import { loadConfig, type ServerConfig } from '../config.js';
import { openStore } from '../store/index.js';
import { runAccountCommand } from './account-command.js';

// The account commands against a real SQLite data dir, with stdin given as a stream.
describe('svc-server account', () => {
  let dir: string;
  let config: ServerConfig;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-cli-'));
    config = loadConfig({ SVC_DATA_DIR: dir, SVC_HTTP_PORT: '8080' });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(args: string[], stdinText?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    const stdin = new PassThrough();
    if (stdinText !== undefined) stdin.end(stdinText);
    else stdin.end();
    let stdout = '';
    let stderr = '';
    const out = new PassThrough().on('data', (d: Buffer) => (stdout += d.toString()));
    const err = new PassThrough().on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await runAccountCommand(args, config, { stdin, stdout: out, stderr: err });
    return { code, stdout, stderr };
  }

  async function withStore<T>(fn: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> {
    const store = await openStore({ dataDir: dir });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }

  it('create --password-stdin sets the dashboard password from one stdin line', async () => {
    const result = await run(['create', '--email', 'pw@example.com', '--password-stdin'], 'from stdin pw\nignored\n');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /with a dashboard password/);
    assert.match(result.stdout, /svc_[A-Za-z0-9_-]{43}/);
    await withStore(async (store) => {
      const account = (await store.accounts.byEmail('pw@example.com'))!;
      assert.equal(await verifyPassword('from stdin pw', (await store.accounts.passwordHash(account.id))!), true);
    });
  });

  it('create --password-stdin refuses a short password before creating anything', async () => {
    const result = await run(['create', '--email', 'short@example.com', '--password-stdin'], 'short\n');
    assert.deepEqual([result.code, result.stderr], [2, 'svc-server account create: password must be at least 8 characters\n']);
    assert.equal(await withStore((store) => store.accounts.byEmail('short@example.com')), undefined);
  });

  it('password --email sets the password from piped stdin and signs the account out everywhere', async () => {
    await run(['create', '--email', 'change@example.com']);
    const cookie = await withStore(async (store) => {
      const account = (await store.accounts.byEmail('change@example.com'))!;
      return (await new DashboardSessions(store).create(account.id)).cookieValue;
    });
    const result = await run(['password', '--email', 'change@example.com'], 'a brand new password\n');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Set the dashboard password of change@example.com/);
    assert.equal(result.stdout.includes('a brand new password') || result.stderr.includes('a brand new password'), false, 'never echoed');
    await withStore(async (store) => {
      const account = (await store.accounts.byEmail('change@example.com'))!;
      assert.equal(await verifyPassword('a brand new password', (await store.accounts.passwordHash(account.id))!), true);
      assert.equal(await new DashboardSessions(store).resolve(cookie), undefined);
    });
  });

  it('password refuses short passwords, missing input and unknown accounts with clear messages', async () => {
    assert.deepEqual(await run(['password', '--email', 'change@example.com'], '1234567\n'), {
      code: 2,
      stdout: '',
      stderr: 'svc-server account password: password must be at least 8 characters\n',
    });
    assert.equal(
      (await run(['password', '--email', 'change@example.com'], '')).stderr,
      'svc-server account password: no password given (stdin ended before a line)\n',
    );
    const unknown = await run(['password', '--email', 'nobody@example.com'], 'long enough pw\n');
    assert.deepEqual([unknown.code, unknown.stderr], [1, 'svc-server account password: no account with email nobody@example.com\n']);
  });

  it('link --email prints a one-time /welcome link on the apex, valid 30 minutes', async () => {
    await run(['create', '--email', 'link@example.com']);
    const result = await run(['link', '--email', 'link@example.com']);
    assert.equal(result.code, 0, result.stderr);
    const match = /^ {2}http:\/\/localhost:8080\/welcome#token=(svl_[A-Za-z0-9_-]{43})$/m.exec(result.stdout);
    assert.ok(match, result.stdout);
    assert.match(result.stdout, /valid for 30 minutes and works once/);
    await withStore(async (store) => {
      const account = (await store.accounts.byEmail('link@example.com'))!;
      assert.equal(await consumeSignInLink(store, match[1]!), account.id);
    });
  });

  it('unknown actions and switches print the usage', async () => {
    assert.equal((await run(['delete', '--email', 'x@example.com'])).code, 2);
    assert.match((await run(['nope'])).stderr, /account password --email E/);
    assert.equal(
      (await run(['link', '--email', 'x@example.com', '--password-stdin'])).stderr,
      'svc-server account link: unknown option --password-stdin\n',
    );
  });
});
