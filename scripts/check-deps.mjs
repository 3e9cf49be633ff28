#!/usr/bin/env node
// Dependency-direction check: dependencies point one way (README "Development").
// Fails with one line per violation. Run by `npm test` before the suites.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** Which workspace packages each package may import. */
const PACKAGE_RULES = {
  protocol: [],
  sdk: ['@svcrouter/protocol'],
  agent: ['@svcrouter/sdk', '@svcrouter/protocol'],
  server: ['@svcrouter/protocol'],
  // The browser app talks to the server over HTTP only.
  dashboard: [],
};
/** Server folders and the server folders they must not import. */
const SERVER_FOLDER_RULES = {
  // What a DNS hostname is: a leaf every folder may use.
  hostname: ['store', 'auth', 'edge', 'api', 'certs', 'domains', 'usage', 'inspector', 'metrics', 'cli', 'dashboard'],
  store: ['edge', 'api', 'certs', 'domains', 'usage', 'inspector', 'metrics', 'auth', 'cli'],
  auth: ['edge', 'api', 'certs', 'domains', 'usage', 'inspector', 'metrics', 'cli'],
  certs: ['edge', 'api', 'domains', 'usage', 'inspector', 'metrics', 'cli'],
  domains: ['edge', 'api', 'usage', 'inspector', 'metrics', 'cli'],
  usage: ['edge', 'api', 'certs', 'domains', 'inspector', 'cli'],
  inspector: ['edge', 'api', 'certs', 'domains', 'usage', 'cli'],
  metrics: ['edge', 'api', 'certs', 'domains', 'usage', 'inspector', 'store', 'cli'],
  edge: ['api', 'cli', 'domains', 'usage', 'inspector'],
  api: ['edge', 'cli'],
  // Static files only: it knows a folder, not the store, the API or the edge.
  dashboard: ['store', 'auth', 'edge', 'api', 'certs', 'domains', 'usage', 'inspector', 'metrics', 'cli'],
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
 * documented SVC_* variables (token, server…) when a caller leaves them out, in one place.
 */
const ENV_READERS = new Set(['packages/sdk/src/env-defaults.ts']);

const violations = [];
const importPattern = /(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
for (const [pkg, allowed] of Object.entries(PACKAGE_RULES)) {
  const src = path.join(root, 'packages', pkg, 'src');
  for (const file of files(src)) {
    const rel = path.relative(root, file);
    const text = readFileSync(file, 'utf8');
    const isTest = /\.test\.ts$|test-support|\.fixture\.ts$/.test(file);
    for (const match of text.matchAll(importPattern)) {
      const spec = match[1] ?? match[2];
      if (spec.startsWith('@svcrouter/') && !allowed.includes(spec) && !isTest) {
        violations.push(`${rel}: ${pkg} must not import ${spec}`);
      }
      if (spec.startsWith('.')) {
        const target = path.resolve(path.dirname(file), spec);
        if (!target.startsWith(src)) violations.push(`${rel}: reaches outside its package (${spec})`);
        if (pkg === 'server' && !isTest) {
          const fromFolder = path.relative(src, file).split(path.sep)[0];
          const toFolder = path.relative(src, target).split(path.sep)[0];
          const banned = SERVER_FOLDER_RULES[fromFolder] ?? [];
          if (fromFolder !== toFolder && banned.includes(toFolder)) {
            violations.push(`${rel}: server/${fromFolder} must not import server/${toFolder} (${spec})`);
          }
        }
      }
    }
    // Only a package's composition root reads the environment.
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    if (!isTest && !/\/main\.ts$/.test(file) && !ENV_READERS.has(rel) && /process\.env\b/.test(code)) {
      violations.push(`${rel}: reads process.env outside main.ts`);
    }
  }
}
if (violations.length > 0) {
  console.error(`dependency check: ${violations.length} violation(s)`);
  for (const line of violations) console.error(`  ${line}`);
  process.exit(1);
}
console.log('dependency check: ok');
