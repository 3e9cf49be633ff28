#!/usr/bin/env node
// The svc-server command: runs a subcommand (cli/) or starts the server (server.ts, which wires
// every folder). May use: every server folder and root file; of the other packages, protocol.

// First import, evaluated before any other module: see v8-tuning.ts.
import './v8-tuning.js';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { SVC_VERSION } from '@svcrouter/protocol';
import { printWelcome, runAccountCommand, runClusterCommand, runOidcCommand } from './cli/index.js';
import { loadConfig, type ServerConfig } from './config.js';
import { LOG_REDACTION } from './log-redaction.js';
import { loadOidcSealer } from './oidc-sealer.js';
import { startServer } from './server.js';

// Composition root: the only module that reads process.env, parses argv and owns signals.

/** The dashboard's build output, beside this package in the workspace (packages/dashboard/dist). */
const DASHBOARD_DIR = fileURLToPath(new URL('../../dashboard/dist', import.meta.url));

const USAGE = `Usage:
  svc-server start                                              edge + REST API + dashboard
  svc-server account create --email E [--name N] [--plan free|pro] [--password-stdin]
                                                                create an account, print its token once
                                                                (--password-stdin: its dashboard password, one line on stdin)
  svc-server account plan --email E --plan free|pro             change an account's plan
  svc-server account password --email E                         set the dashboard password (typed without echo,
                                                                or one line on stdin); signs the account's browsers out
  svc-server account link --email E                             print a one-time dashboard sign-in link (30 minutes)
  svc-server cluster status [--json]                            the nodes sharing this PostgreSQL: heartbeats, sessions, tunnels
  svc-server oidc rotate-key                                    a new signing key for X-Svc-Identity (signs after
                                                                SVC_OIDC_KEY_ACTIVATION_SECONDS, default 60)
  svc-server oidc keys [--json]                                 the signing keys: pending, signing, retiring
  svc-server version                                            print the version

Configuration is read from SVC_* environment variables (SVC_SIGNUP=closed turns dashboard sign-up off); see the README.`;

async function main(argv: string[]): Promise<number> {
  const [command = 'start', ...rest] = argv;
  if (command === 'version' || command === '--version') {
    process.stdout.write(`svc-server ${SVC_VERSION}\n`);
    return 0;
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let config: ServerConfig;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    process.stderr.write(`svc-server: ${(error as Error).message}\n`);
    return 2;
  }
  if (command === 'account')
    return runAccountCommand(rest, config, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
  if (command === 'cluster') return runClusterCommand(rest, config, { stdout: process.stdout, stderr: process.stderr });
  if (command === 'oidc')
    return runOidcCommand(rest, config, { stdout: process.stdout, stderr: process.stderr }, { loadSealer: () => loadOidcSealer(config) });
  if (command !== 'start') {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  return start(config);
}

async function start(config: ServerConfig): Promise<number> {
  // Logs go to stderr as JSON; stdout is for what a person reads (URLs, the first token).
  const log = pino(
    {
      level: config.logLevel,
      base: { service: 'svc-server' },
      redact: LOG_REDACTION,
    },
    pino.destination(2),
  );
  let server;
  try {
    server = await startServer(config, log, DASHBOARD_DIR);
  } catch (error) {
    const err = error as NodeJS.ErrnoException;
    const hint = err.code === 'EADDRINUSE' ? ' (is another svc-server running? set SVC_HTTP_PORT / SVC_HTTPS_PORT)' : '';
    process.stderr.write(`svc-server: cannot start: ${err.message}${hint}\n`);
    return 1;
  }
  await printWelcome(server, config, process.stdout);
  return new Promise<number>((resolve) => {
    const stop = (signal: string): void => {
      log.info({ signal, drainMs: config.drainMs, unreadyMs: config.unreadyMs }, 'shutting down');
      server.close({ drainMs: config.drainMs, unreadyMs: config.unreadyMs }).then(
        () => resolve(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

const code = await main(process.argv.slice(2));
process.exitCode = code;
setImmediate(() => process.exit(code)).unref();
