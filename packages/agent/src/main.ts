#!/usr/bin/env node
// First import, evaluated before any other module: see v8-tuning.ts.
import './v8-tuning.js';
import { readFileSync } from 'node:fs';
import { runCli } from './cli.js';
import { terminalOutput } from './output.js';

// Composition root: the only place that reads process.env and touches the process.
const env = process.env;
const output = terminalOutput(process.stdout, process.stderr);
const code = await runCli(
  process.argv.slice(2),
  {
    token: env.SVC_TOKEN,
    subdomain: env.SVC_SUBDOMAIN,
    domain: env.SVC_DOMAIN,
    server: env.SVC_SERVER,
    ca: env.SVC_CA_FILE ? readFileSync(env.SVC_CA_FILE, 'utf8') : undefined,
  },
  output,
  {
    onStop(handler) {
      process.once('SIGINT', handler);
      process.once('SIGTERM', handler);
    },
  },
);
process.exitCode = code;
output.flush();
// Pooled origin connections or timers must not keep a finished agent alive.
setImmediate(() => process.exit(code)).unref();
