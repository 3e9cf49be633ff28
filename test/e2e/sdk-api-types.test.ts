import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { REPO_ROOT, startServer, type TestServer } from './harness/index.js';

// The SDK's committed REST types must be exactly what the generator makes from the OpenAPI
// document a real server publishes now; a route that changed shape fails here first.

const GENERATED = 'packages/sdk/src/generated/api-types.ts';
const REGENERATE = 'npm run generate:api-types';

describe('SDK REST types', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.close();
  });

  it(`${GENERATED} matches the server's /v1/openapi.json`, async () => {
    const script = path.join(REPO_ROOT, 'scripts/generate-api-types.mjs');
    const { stdout } = await promisify(execFile)(process.execPath, [script, '--server', server.url, '--stdout'], {
      maxBuffer: 16 * 1024 * 1024,
    });
    const committed = await readFile(path.join(REPO_ROOT, GENERATED), 'utf8');
    if (stdout === committed) return;
    const fresh = stdout.split('\n');
    const old = committed.split('\n');
    const line = fresh.findIndex((text, index) => text !== old[index]);
    assert.fail(
      `${GENERATED} is out of date with the server's /v1/openapi.json; regenerate it with \`${REGENERATE}\` and commit it.\n` +
        `first difference at line ${line + 1}:\n  committed: ${old[line] ?? '(end of file)'}\n  generated: ${fresh[line] ?? '(end of file)'}`,
    );
  });
});
