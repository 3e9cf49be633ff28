import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Proc, spawnNode as spawnNodeProcess, tempDir } from '@svcrouter/testkit';

export { Proc, tempDir };

/** Repository root, from this file's location (test/e2e/harness). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** Built entry points: e2e tests run what users run. `npm test` builds first. */
export const SERVER_BIN = path.join(REPO_ROOT, 'packages/server/dist/main.js');
export const AGENT_BIN = path.join(REPO_ROOT, 'packages/agent/dist/main.js');

/** Spawns `node <script> ...args` with a clean SVC_* environment plus `env` (SVC_E2E_VERBOSE echoes its lines). */
export function spawnNode(script: string, args: string[], env: Record<string, string | undefined>, label: string): Proc {
  return spawnNodeProcess(script, args, { env, label, echo: Boolean(process.env.SVC_E2E_VERBOSE) });
}

/** Waits for an event with the test runner's timeout as the bound. */
export { once };

/**
 * Splits what the agent printed for a failure: its sentence, then one `hint:` line. Fails the
 * test when the hint is missing, since every failure must say what to do about it.
 */
export function splitFailure(stderr: string): { sentence: string; hint: string } {
  const lines = stderr.trimEnd().split('\n');
  const hint = lines.pop() ?? '';
  if (!hint.startsWith('hint: ') || hint.length < 12) throw new Error(`no hint after the failure:\n${stderr}`);
  return { sentence: lines.join('\n'), hint: hint.slice('hint: '.length) };
}
