#!/usr/bin/env node
// Builds the agent (`svc`) as one executable that runs with no Node installed: Node's single
// executable applications. The built agent (packages/agent/dist, from `tsc -b`) is bundled into
// one CommonJS file, since the embedded script may `require()` only Node's built-in modules;
// the inspector's web UI goes in as assets; the blob is injected with postject into a copy of
// the Node binary running this script. Writes dist-bin/svc-<platform>-<arch>, for this
// machine's platform only: Node builds an executable from its own binary, and macOS and Windows
// need signing steps this script does not take. Usage: node scripts/build-agent-binary.mjs
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { inject } from 'postject';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const agentDir = path.join(root, 'packages/agent');
const entry = path.join(agentDir, 'dist/main.js');
const uiDir = path.join(agentDir, 'inspector-ui');
const outDir = path.join(root, 'dist-bin');
const workDir = path.join(outDir, '.work');
const name = `svc-${process.platform}-${process.arch}`;
const output = path.join(outDir, name);
/** The fuse Node's binary carries to say whether a blob was injected (Node's SEA documentation). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

function fail(message) {
  console.error(`build-agent-binary: ${message}`);
  process.exit(1);
}

if (process.platform !== 'linux') fail(`builds on Linux only (this is ${process.platform}); macOS and Windows need code signing`);
if (!existsSync(entry)) fail(`${path.relative(root, entry)} is missing: run \`npm run build\` first`);
const started = performance.now();
rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });

// 1. One CommonJS file holding the agent, the SDK, the protocol and their npm dependencies.
const bundle = path.join(workDir, 'svc.cjs');
const bundled = await build({
  entryPoints: [entry],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: `node${process.versions.node}`,
  logLevel: 'silent',
  metafile: true,
  // ws (svc doctor's WebSocket check) would try its optional native speed-ups, and an executable
  // can require only built-in modules (Node warns on the attempt): its JavaScript code is used.
  define: { 'process.env.WS_NO_BUFFER_UTIL': '"1"', 'process.env.WS_NO_UTF_8_VALIDATE': '"1"' },
});
// ui-files.ts reads import.meta only when the files lie on disk, never inside the executable.
// Any other warning (an unresolved import, another use of import.meta) fails the build.
const unexpected = bundled.warnings.filter(
  (warning) => !(warning.id === 'empty-import-meta' && warning.location?.file.endsWith('ui-files.js')),
);
if (unexpected.length > 0) fail(`esbuild warned:\n${unexpected.map((w) => `${w.location?.file}: ${w.text}`).join('\n')}`);
// The native speed-ups ws skips (see `define` above) still appear as imports of the bundle.
const OPTIONAL_NATIVE = new Set(['bufferutil', 'utf-8-validate']);
const external = Object.values(bundled.metafile.outputs)
  .flatMap((out) => out.imports)
  .filter((imported) => imported.external && !isBuiltin(imported.path) && !OPTIONAL_NATIVE.has(imported.path));
if (external.length > 0) fail(`left out of the bundle: ${external.map((imported) => imported.path).join(', ')}`);

// 2. The preparation blob: the bundle, V8's code cache for it (faster start) and the UI's files.
const assets = Object.fromEntries(readdirSync(uiDir).map((file) => [file, path.join(uiDir, file)]));
const blob = path.join(workDir, 'sea-prep.blob');
const config = path.join(workDir, 'sea-config.json');
writeFileSync(
  config,
  JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true, assets }, null, 2),
);
// Its output only says where the blob went; on a failure, the thrown error carries it.
execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'pipe' });

// 3. A copy of this Node with the blob injected, checked, then moved into place in one step.
const staged = path.join(workDir, name);
copyFileSync(process.execPath, staged);
chmodSync(staged, 0o755);
// postject warns "Can't find string offset for section name '.note.100'" (a dozen times) about
// Node's ELF notes, which is harmless: those lines are dropped, any other warning is shown.
const warn = console.warn;
console.warn = (...args) => {
  if (!/^warning: Can't find string offset for section name/.test(String(args[0]))) warn(...args);
};
try {
  await inject(staged, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
} finally {
  console.warn = warn;
}
const { version } = JSON.parse(readFileSync(path.join(agentDir, 'package.json'), 'utf8'));
const printed = execFileSync(staged, ['version'], { env: {}, encoding: 'utf8' }).trim();
if (printed !== `svc ${version}`) fail(`the executable printed "${printed}", expected "svc ${version}"`);
renameSync(staged, output);
rmSync(workDir, { recursive: true, force: true });
const mib = (statSync(output).size / 2 ** 20).toFixed(1);
console.log(
  `${path.relative(root, output)}: svc ${version} on Node ${process.version}, ${mib} MiB, built in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
