#!/usr/bin/env node
// Generates the SDK's REST types (packages/sdk/src/generated/api-types.ts) from the OpenAPI
// document a real svc-server serves, so the typed client cannot drift from the routes.
//   node scripts/generate-api-types.mjs                  start svc-server (built) on free ports, write the file
//   node scripts/generate-api-types.mjs --server <url>   read <url>/v1/openapi.json instead
//   add --stdout to print the result instead of writing it (the drift test compares it).
// openapi-typescript 6 renders with string templates; version 7 needs TypeScript's JS API,
// which the native TypeScript 7 compiler this repository builds with does not ship.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import openapiTS from 'openapi-typescript';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const OUTPUT = path.join(root, 'packages/sdk/src/generated/api-types.ts');
const SERVER_BIN = path.join(root, 'packages/server/dist/main.js');
const HEADER = `// Generated from svc-server's /v1/openapi.json by \`npm run generate:api-types\`; do not edit.\n`;

const args = process.argv.slice(2);
const serverArg = args.indexOf('--server');
const serverUrl = serverArg >= 0 ? args[serverArg + 1] : undefined;
if (serverArg >= 0 && !serverUrl) fail('--server needs a URL, e.g. --server http://localhost:8080');

const document = serverUrl ? await fetchDocument(serverUrl) : await withLocalServer(fetchDocument);
const types = HEADER + (await openapiTS(document));
if (args.includes('--stdout')) process.stdout.write(types);
else {
  await writeFile(OUTPUT, types);
  console.log(`wrote ${path.relative(root, OUTPUT)}`);
}

async function fetchDocument(base) {
  const url = new URL('/v1/openapi.json', base);
  const response = await fetch(url);
  if (!response.ok) fail(`GET ${url} answered ${response.status}`);
  return response.json();
}

/** Runs `use(apexUrl)` against a throwaway svc-server (fresh data dir, free loopback ports). */
async function withLocalServer(use) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-openapi-'));
  const child = spawn(process.execPath, [SERVER_BIN, 'start'], {
    env: {
      PATH: process.env.PATH,
      SVC_DATA_DIR: dataDir,
      SVC_HTTP_PORT: '0',
      SVC_HTTPS_PORT: '0',
      SVC_BIND_HOST: '127.0.0.1',
      SVC_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  try {
    const url = await new Promise((resolve, reject) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        const match = line.match(/REST API\s+(http:\/\/\S+?)\/v1\b/);
        if (match) resolve(match[1]);
      });
      void exited.then(([code]) => reject(new Error(`svc-server exited (${code}) before listening; run \`npm run build\` first`)));
    });
    return await use(url);
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

function fail(message) {
  console.error(`generate-api-types: ${message}`);
  process.exit(1);
}
