#!/usr/bin/env node
// svc, the agent: parses the command line and svc.yml, runs tunnels through the SDK, prints the
// terminal output and serves the local inspector.
// May use: @svcrouter/sdk, @svcrouter/protocol; never server code.

// First import, evaluated before any other module: see v8-tuning.ts.
import './v8-tuning.js';
import { runCli } from './cli.js';
import { terminalOutput } from './output.js';
import { jsonOutput } from './output-json.js';
import { screenOutput } from './screen.js';

// Composition root: the only place that reads process.env and touches the process. No top-level
// await: the single executable (scripts/build-agent-binary.mjs) bundles this file as CommonJS.
const env = process.env;
void runCli(
  process.argv.slice(2),
  {
    token: env.SVC_TOKEN,
    subdomain: env.SVC_SUBDOMAIN,
    domain: env.SVC_DOMAIN,
    hostHeader: env.SVC_HOST_HEADER,
    server: env.SVC_SERVER,
    caFile: env.SVC_CA_FILE,
    basicAuth: env.SVC_BASIC_AUTH,
    cidrAllow: env.SVC_CIDR_ALLOW,
    cidrDeny: env.SVC_CIDR_DENY,
  },
  (command) => {
    const display = 'display' in command ? command.display : undefined;
    if (display?.json) return jsonOutput(process.stdout, process.stderr);
    if (display === undefined || display.logStdout || !process.stdout.isTTY) return terminalOutput(process.stdout, process.stderr);
    return screenOutput(process.stdout, process.stderr);
  },
  {
    onStop(handler) {
      process.once('SIGINT', handler);
      process.once('SIGTERM', handler);
    },
  },
).then(({ code, output }) => {
  process.exitCode = code;
  output.flush();
  // Pooled origin connections or timers must not keep a finished agent alive.
  setImmediate(() => process.exit(code)).unref();
});
