import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { runCli, type AgentEnv } from './cli.js';
import type { Output } from './output.js';

/** An Output that keeps the error lines and ignores everything else. */
function recordingOutput(errors: string[]): Output {
  return new Proxy({} as Output, {
    get: (_target, key) => (key === 'error' ? (line: string) => errors.push(line) : () => undefined),
  });
}

const BASE_ENV: AgentEnv = {
  token: 'svc_unused',
  subdomain: undefined,
  domain: undefined,
  hostHeader: undefined,
  server: 'http://127.0.0.1:9',
  caFile: undefined,
};

async function run(argv: string[], env: Partial<AgentEnv>): Promise<{ code: number; errors: string[] }> {
  const errors: string[] = [];
  const { code } = await runCli(argv, { ...BASE_ENV, ...env }, () => recordingOutput(errors), { onStop: () => undefined });
  return { code, errors };
}

const dir = mkdtempSync(path.join(tmpdir(), 'svc-cli-env-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('svc tcp and svc tls refuse access rules set in the environment instead of leaving the port open', async () => {
  const tcp = await run(['tcp', '22'], { cidrAllow: '10.0.0.0/8' });
  assert.equal(tcp.code, 2);
  assert.match(
    tcp.errors.join('\n'),
    /^SVC_CIDR_ALLOW is set, but access rules apply to HTTP tunnels only: svc tcp would let every visitor through/,
  );
  const tls = await run(['tls', '9443', '--subdomain', 'db'], { basicAuth: 'alice:correct-horse' });
  assert.equal(tls.code, 2);
  assert.match(tls.errors.join('\n'), /^SVC_BASIC_AUTH is set, .* svc tls would let every visitor through/);
  assert.doesNotMatch(tls.errors.join('\n'), /correct-horse/);
});

test('svc start refuses access rules from the environment when a tunnel it starts is TCP', async () => {
  const file = path.join(dir, 'svc.yml');
  writeFileSync(file, 'tunnels:\n  web:\n    addr: 3000\n  db:\n    addr: 5432\n    proto: tcp\n');
  const started = await run(['start', '--config', file], { cidrDeny: '192.0.2.0/24' });
  assert.equal(started.code, 2);
  assert.match(
    started.errors.join('\n'),
    /^SVC_CIDR_DENY is set, but access rules apply to HTTP tunnels only, and tunnel db is proto: tcp/,
  );
});

test('an SVC_BASIC_AUTH password with a comma in it is a usage error that does not print it', async () => {
  // A well-formed token, so the run gets as far as reading the access rules.
  const result = await run(['http', '3000'], { token: `svc_${'a'.repeat(43)}`, basicAuth: 'alice:correct,horse-staple' });
  assert.equal(result.code, 2);
  assert.match(result.errors.join('\n'), /^SVC_BASIC_AUTH: the text after a comma following the password of "alice" has no colon/);
  assert.doesNotMatch(result.errors.join('\n'), /correct|horse/);
});

test('a usage error prints its sentence and a pointer to svc help, not the whole usage', async () => {
  const typo = await run(['http', '3000', '--subdomian', 'shop'], {});
  assert.equal(typo.code, 2);
  assert.equal(typo.errors.length, 1);
  assert.match(typo.errors[0]!, /^Unknown option '--subdomian'\. .*\nhint: svc help lists the commands and their flags$/);
});
