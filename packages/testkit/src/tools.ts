import assert from 'node:assert/strict';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';

// sbin folders are often missing from a non-root PATH, and dnsmasq lives there.
const EXTRA_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Absolute path of an executable on PATH (or in the usual sbin/bin folders), or undefined. */
export function findTool(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter((d) => d !== ''), ...EXTRA_DIRS];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next folder
    }
  }
  return undefined;
}

/**
 * True when every tool is installed. Otherwise registers one test named `suite`
 * that fails under CI=true (CI must run every suite) and is skipped elsewhere,
 * with a notice on stderr naming the Debian package to install.
 */
export function requireTools(suite: string, tools: readonly string[], aptPackage: string): boolean {
  const missing = tools.filter((t) => findTool(t) === undefined);
  if (missing.length === 0) return true;
  const why = `${missing.join(', ')} not found (apt-get install -y ${aptPackage})`;
  if (process.env.CI === 'true') {
    test(suite, () => assert.fail(`${why}: CI must run ${suite}`));
  } else {
    const notice = `skipping ${suite}: ${why}`;
    process.stderr.write(`${notice}\n`);
    test(suite, { skip: notice }, () => {});
  }
  return false;
}
