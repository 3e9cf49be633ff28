#!/usr/bin/env node
// Dependency-direction check: dependencies point one way (README "Development"). Covers every
// package's src/ (the server's root files included), bench/src and test/e2e: which packages each may
// import, which server folders may import which, no import of a package's built dist/, and no
// import cycle among relative imports. Fails with one line per violation. Run by `npm test`.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** Which workspace packages each package may import. */
const PACKAGE_RULES = {
  // Child processes for tests and the benchmark; imported by test code only.
  testkit: [],
  protocol: [],
  sdk: ['@svcrouter/protocol'],
  agent: ['@svcrouter/sdk', '@svcrouter/protocol'],
  server: ['@svcrouter/protocol'],
  // The browser app talks to the server over HTTP only.
  dashboard: [],
};
/**
 * Packages whose types (and nothing else) a package may import: the dashboard reads the API's
 * shapes from the SDK's generated types, which the bundler erases.
 */
const TYPE_ONLY_RULES = {
  dashboard: ['@svcrouter/sdk'],
};
/** What the benchmark may import: packages by name (their exports), never their files. */
const BENCH_PACKAGES = ['@svcrouter/protocol', '@svcrouter/sdk', '@svcrouter/server', '@svcrouter/testkit'];
/** What the whole-system tests may import: every package by name (their exports), never their files. */
const E2E_PACKAGES = [...BENCH_PACKAGES, '@svcrouter/agent'];
/** Server root files a server folder may import: only the parsed config's types and defaults. */
const SERVER_ROOT_IMPORTABLE = new Set(['config.ts']);
/**
 * Import cycles known and being removed elsewhere, each as its files sorted and joined by
 * spaces. None today. A cycle not listed here fails the check.
 */
const PENDING_CYCLES = new Set([]);
/**
 * The server's rooms and what each may use: the server folders it may import (besides itself).
 * This is the map of packages/server/src; docs/how-it-works.md ("Where the code lives") says the
 * same in words. A folder missing here fails the check: a new room gets its line and its sign.
 * Root files (server.ts, custom-domains.ts, main.ts…) are the composition: they may use every
 * folder, and a folder may use of them only SERVER_ROOT_IMPORTABLE.
 */
const SERVER_FOLDER_RULES = {
  // What a DNS hostname is: a leaf every folder may use.
  hostname: [],
  // One interface, SQLite and PostgreSQL: everything else reaches the database through it.
  store: ['hostname'],
  // Tokens, accounts, passwords, dashboard sessions.
  auth: ['hostname', 'store'],
  // Dev CA, ACME on demand, certificate cache, SNI.
  certs: ['hostname', 'store', 'auth'],
  // Custom domains: TXT checks, preflight, bind checks, the removal cascade.
  domains: ['hostname', 'store', 'auth', 'certs'],
  // Metering and quotas.
  usage: ['hostname', 'store', 'auth', 'metrics'],
  // The Traffic Inspector's write path and live feed.
  inspector: ['hostname', 'store', 'auth', 'metrics'],
  // Prometheus registry and gauges; its sources are handed in as functions.
  metrics: ['hostname'],
  // The data path. Domains, usage and the inspector reach it as functions from server.ts.
  edge: ['hostname', 'store', 'auth', 'certs', 'metrics', 'policy'],
  // The REST API; the edge and the cluster reach it as functions from server.ts.
  api: ['hostname', 'store', 'auth', 'certs', 'domains', 'usage', 'inspector', 'metrics', 'webhooks'],
  // Static files only: it knows a folder, not the store, the API or the edge.
  dashboard: [],
  // Several edge nodes: it drives the edge and the store, and is driven by server.ts and cli only.
  cluster: ['hostname', 'store', 'edge', 'policy'],
  // The svc-server subcommands besides start.
  cli: ['hostname', 'store', 'auth', 'certs', 'cluster', 'oidc'],
  // Signed webhooks: the store's outbox, signing and delivery; its sources report to it through server.ts.
  webhooks: ['hostname', 'store'],
  // A tunnel's policy on the request path (access rules): a leaf the edge and the cluster's relay use.
  policy: [],
  // Single sign-on: providers, the tunnel host's gate (the policy's SignIn), the apex's callback and JWKS.
  oidc: ['hostname', 'store', 'policy', 'edge'],
};

function files(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) files(full, out);
    else if (name.endsWith('.ts') || name.endsWith('.tsx')) out.push(full);
  }
  return out;
}

/**
 * Files besides composition roots that may read the environment: the SDK falls back on its
 * documented SVC_* variables (token, server…) when a caller leaves them out, in one place; the
 * testkit hands children the caller's environment without its SVC_* variables.
 */
const ENV_READERS = new Set(['packages/sdk/src/env-defaults.ts', 'packages/testkit/src/processes.ts']);

const violations = [];
const importPattern =
  /(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;
/** Tests and what only tests use: exempt from the package rules, and never imported by other code. */
const TEST_CODE = /\.test\.ts$|test-support|\/packages\/testkit\/|\.fixture\.ts$|\.contract\.ts$/;
/** Relative imports of every checked file, resolved to files, for the cycle check. */
const graph = new Map();

const packageName = (spec) => spec.split('/').slice(0, 2).join('/');
/** An import of one of our packages' built files (third-party packages ship what they ship). */
const builtPath = (spec) => (spec.startsWith('@svcrouter/') || spec.startsWith('.')) && /(^|\/)dist(\/|$)/.test(spec);

/** The .ts file a relative specifier names, or undefined (a data file, a missing file). */
function resolveRelative(file, spec) {
  const base = path.resolve(path.dirname(file), spec).replace(/\.js$/, '');
  return [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')].find((candidate) => existsSync(candidate));
}

function checkFile(file, { area, src, allowed, server }) {
  const rel = path.relative(root, file);
  const text = readFileSync(file, 'utf8');
  const isTest = TEST_CODE.test(file);
  const edges = [];
  for (const match of text.matchAll(importPattern)) {
    const spec = match[1] ?? match[2] ?? match[3];
    const typeOnly = /^\s*(?:import|export)\s+type\b/.test(match[0]);
    if (builtPath(spec)) violations.push(`${rel}: imports a built file (${spec}); import the package or its source`);
    const typesAllowed = typeOnly && (TYPE_ONLY_RULES[area] ?? []).includes(packageName(spec));
    if (spec.startsWith('@svcrouter/') && !allowed.includes(packageName(spec)) && !typesAllowed && !isTest) {
      violations.push(`${rel}: ${area} must not import ${spec}`);
    }
    if (!spec.startsWith('.')) continue;
    const target = path.resolve(path.dirname(file), spec);
    if (!target.startsWith(src + path.sep)) violations.push(`${rel}: reaches outside ${path.relative(root, src)} (${spec})`);
    const resolved = resolveRelative(file, spec);
    if (resolved) edges.push(resolved);
    // What the program runs never loads test code, though both compile into dist/.
    if (resolved && !isTest && TEST_CODE.test(resolved)) violations.push(`${rel}: imports test code (${spec})`);
    if (server && !isTest) {
      const fromFolder = path.relative(src, file).split(path.sep)[0];
      const toPath = path.relative(src, target).split(path.sep);
      const toFolder = toPath[0];
      const fromRoot = fromFolder.endsWith('.ts');
      const toRootFile = toPath.length === 1 ? `${toFolder.replace(/\.js$/, '')}.ts` : undefined;
      if (!fromRoot && toRootFile !== undefined && !SERVER_ROOT_IMPORTABLE.has(toRootFile)) {
        violations.push(`${rel}: server/${fromFolder} must not import the composition file ${toRootFile} (${spec})`);
      }
      const mayUse = SERVER_FOLDER_RULES[fromFolder] ?? [];
      if (!fromRoot && toRootFile === undefined && fromFolder !== toFolder && !mayUse.includes(toFolder)) {
        const allowed = mayUse.length > 0 ? mayUse.join(', ') : 'no other server folder';
        violations.push(`${rel}: server/${fromFolder} may use ${allowed}; not server/${toFolder} (${spec})`);
      }
    }
  }
  graph.set(file, edges);
  // Only a package's composition root reads the environment.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  // The benchmark and the whole-system tests are programs of their own, run by people and CI.
  if (area !== 'bench' && area !== 'e2e' && !isTest && !/\/main\.ts$/.test(file) && !ENV_READERS.has(rel) && /process\.env\b/.test(code)) {
    violations.push(`${rel}: reads process.env outside main.ts`);
  }
}

// Every server folder is on the map, and the map names no folder that is gone.
{
  const serverSrc = path.join(root, 'packages', 'server', 'src');
  const folders = readdirSync(serverSrc).filter((name) => statSync(path.join(serverSrc, name)).isDirectory());
  for (const folder of folders) {
    if (!(folder in SERVER_FOLDER_RULES)) {
      violations.push(`packages/server/src/${folder}: no line in SERVER_FOLDER_RULES (scripts/check-deps.mjs) says what it may use`);
    }
  }
  for (const folder of Object.keys(SERVER_FOLDER_RULES)) {
    if (!folders.includes(folder)) violations.push(`SERVER_FOLDER_RULES names server/${folder}, which does not exist`);
  }
}

for (const [pkg, allowed] of Object.entries(PACKAGE_RULES)) {
  const src = path.join(root, 'packages', pkg, 'src');
  for (const file of files(src)) checkFile(file, { area: pkg, src, allowed, server: pkg === 'server' });
}
const benchSrc = path.join(root, 'bench', 'src');
for (const file of files(benchSrc)) checkFile(file, { area: 'bench', src: benchSrc, allowed: BENCH_PACKAGES, server: false });
const e2eSrc = path.join(root, 'test', 'e2e');
for (const file of files(e2eSrc)) checkFile(file, { area: 'e2e', src: e2eSrc, allowed: E2E_PACKAGES, server: false });

// Cycles: strongly connected components of the relative-import graph (Tarjan), type-only
// imports included: a circle of types is still two modules that cannot be read apart.
const seenCycles = new Set();
{
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const visit = (node) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(path.relative(root, member));
    } while (member !== node);
    const selfLoop = component.length === 1 && (graph.get(node) ?? []).includes(node);
    if (component.length < 2 && !selfLoop) return;
    const key = component.sort().join(' ');
    seenCycles.add(key);
    if (!PENDING_CYCLES.has(key)) violations.push(`import cycle: ${component.join(' <-> ')}`);
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
}
for (const key of PENDING_CYCLES) {
  if (!seenCycles.has(key)) console.log(`dependency check: the pending cycle ${key} is gone; remove it from PENDING_CYCLES`);
}
for (const key of PENDING_CYCLES) {
  if (seenCycles.has(key)) console.log(`dependency check: pending import cycle (being removed): ${key.split(' ').join(' <-> ')}`);
}
if (violations.length > 0) {
  console.error(`dependency check: ${violations.length} violation(s)`);
  for (const line of violations) console.error(`  ${line}`);
  process.exit(1);
}
console.log('dependency check: ok');
