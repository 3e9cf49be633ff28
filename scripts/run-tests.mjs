#!/usr/bin/env node
// Lists the test files and runs them with Node's test runner through tsx. Node 20 does not
// expand quoted globs, so the files are found here. Usage:
//   node scripts/run-tests.mjs            unit tests (beside the code in packages/ and bench/) + e2e tests
//   node scripts/run-tests.mjs --unit     unit tests only
//   node scripts/run-tests.mjs --e2e      e2e tests only
//   node scripts/run-tests.mjs <files…>   just those files
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const args = process.argv.slice(2);
const flags = new Set(args.filter((a) => a.startsWith('--')));
const explicit = args.filter((a) => !a.startsWith('--'));

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) find(full, out);
    else if (name.endsWith('.test.ts')) out.push(path.relative(root, full));
  }
  return out;
}

let files = explicit;
if (files.length === 0) {
  const unit = flags.has('--e2e') ? [] : [...find(path.join(root, 'packages')), ...find(path.join(root, 'bench'))];
  const e2e = flags.has('--unit') ? [] : find(path.join(root, 'test'));
  files = [...unit.sort(), ...e2e.sort()];
}
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const nodeArgs = [
  '--import',
  'tsx',
  '--test',
  // Bounds a hung test; no test should come near it. Not a timing assertion.
  '--test-timeout=300000',
  `--test-concurrency=${process.env.SVC_TEST_CONCURRENCY ?? '2'}`,
  ...files,
];
const child = spawn(process.execPath, nodeArgs, { cwd: root, stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
