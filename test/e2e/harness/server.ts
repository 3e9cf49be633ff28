import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { AGENT_BIN, type Proc, SERVER_BIN, spawnNode, tempDir } from './processes.js';

const execFileAsync = promisify(execFile);

export interface ServerOptions {
  /** Extra SVC_* variables. */
  env?: Record<string, string>;
  /** Reuse a data dir (restart tests); a fresh one otherwise. */
  dataDir?: string;
  /** Fixed ports (restart tests); 0 (any free port) otherwise. */
  httpPort?: number;
  httpsPort?: number;
  /**
   * Whether to wait for the first-start token. Default: on a fresh data dir. False for a node
   * joining a shared PostgreSQL that already has accounts (several edge nodes).
   */
  expectToken?: boolean;
}

/** A running `svc-server start` process. */
export interface TestServer {
  proc: Proc;
  /** Apex base URL over HTTP, e.g. http://localhost:40123 */
  url: string;
  httpPort: number;
  httpsPort: number;
  dataDir: string;
  /** PEM of the dev CA. */
  caPem: string;
  caPath: string;
  /** Token of the local account created on first start (undefined on a restart). */
  token: string | undefined;
  env: Record<string, string>;
  /** Runs `svc-server account create` against this server's store; returns the token. */
  createAccount(email: string, plan?: 'free' | 'pro'): Promise<string>;
  /** Runs any `svc-server` CLI command with this server's environment; `input` is written to its stdin. */
  cli(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Stops the process (SIGTERM) and removes the data dir unless kept. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

/** Starts a real svc-server on free loopback ports with a fresh data dir. */
export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const temp = options.dataDir ? undefined : await tempDir('svc-e2e-');
  const dataDir = options.dataDir ?? temp!.dir;
  const env: Record<string, string> = {
    SVC_DATA_DIR: dataDir,
    SVC_HTTP_PORT: String(options.httpPort ?? 0),
    SVC_HTTPS_PORT: String(options.httpsPort ?? 0),
    SVC_BIND_HOST: '127.0.0.1',
    SVC_LOG_LEVEL: 'info',
    // close() sends SIGTERM: a test that leaves a WebSocket open would otherwise wait out the
    // whole default drain in its teardown. Shutdown tests set their own.
    SVC_DRAIN_MS: '2000',
    ...options.env,
  };
  const proc = spawnNode(SERVER_BIN, ['start'], env, 'server');
  const api = await proc.waitForLine(/REST API\s+http:\/\/[^:]+:(\d+)\/v1/);
  const tunnels = await proc.waitForLine(/tunnels\s+https:\/\/<name>\.[^:]+:(\d+)/);
  const httpPort = Number(api[1]);
  const httpsPort = Number(tunnels[1]);
  let token: string | undefined;
  const fresh = proc.lines.some((line) => line.startsWith('Created a local account'));
  if (options.expectToken ?? (fresh || !options.dataDir)) {
    const match = await proc.waitForLine(/^\s+(svc_[A-Za-z0-9_-]{43})$/);
    token = match[1];
  }
  const caPath = path.join(dataDir, 'dev-ca', 'ca.crt');
  const caPem = await readFile(caPath, 'utf8');
  const cli = async (args: string[], input?: string) => {
    try {
      const running = execFileAsync(process.execPath, [SERVER_BIN, ...args], { env: { ...process.env, ...env } });
      running.child.stdin?.end(input ?? '');
      const { stdout, stderr } = await running;
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };
  return {
    proc,
    url: `http://localhost:${httpPort}`,
    httpPort,
    httpsPort,
    dataDir,
    caPem,
    caPath,
    token,
    env,
    cli,
    async createAccount(email, plan = 'free') {
      const result = await cli(['account', 'create', '--email', email, '--plan', plan]);
      const match = result.stdout.match(/svc_[A-Za-z0-9_-]{43}/);
      if (result.code !== 0 || !match) throw new Error(`account create failed: ${result.stdout}${result.stderr}`);
      return match[0];
    },
    async close({ keepData = false } = {}) {
      await proc.kill('SIGTERM');
      if (!keepData) await temp?.remove();
    },
  };
}

/**
 * Runs `test` with a server in its own data dir; `restart` starts a second one on the same
 * ports and data (after the test stopped the first), as an edge restart looks to agents.
 */
export async function withRestartableServer(
  test: (first: TestServer, restart: () => Promise<TestServer>) => Promise<void>,
  options: Omit<ServerOptions, 'dataDir' | 'httpPort' | 'httpsPort'> = {},
): Promise<void> {
  const first = await startServer(options);
  let second: TestServer | undefined;
  try {
    await test(first, async () => {
      second = await startServer({ ...options, dataDir: first.dataDir, httpPort: first.httpPort, httpsPort: first.httpsPort });
      return second;
    });
  } finally {
    await second?.close();
    await first.close();
  }
}

export interface AgentOptions {
  token: string | undefined;
  /** What follows `svc http`: a port, host:port or URL. */
  target: string | number;
  subdomain?: string;
  domain?: string;
  env?: Record<string, string>;
  /** Flags after the target, e.g. ['--host-header', 'rewrite']. */
  args?: string[];
}

/** A running `svc http` process. */
export interface TestAgent {
  proc: Proc;
  /** Public URL printed by the agent. */
  url: string;
  /** Public hostname (no port). */
  hostname: string;
  close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `svc http <target>` against `server` without waiting for anything. */
export function spawnAgent(server: Pick<TestServer, 'url'>, options: AgentOptions): Proc {
  const env: Record<string, string | undefined> = { SVC_SERVER: server.url, ...options.env };
  if (options.token !== undefined) env.SVC_TOKEN = options.token;
  if (options.subdomain !== undefined) env.SVC_SUBDOMAIN = options.subdomain;
  if (options.domain !== undefined) env.SVC_DOMAIN = options.domain;
  return spawnNode(AGENT_BIN, ['http', String(options.target), ...(options.args ?? [])], env, 'agent');
}

/** Starts `svc http <target>` and resolves once it prints its Forwarding line. */
export async function startAgent(server: Pick<TestServer, 'url'>, options: AgentOptions): Promise<TestAgent> {
  const proc = spawnAgent(server, options);
  const match = await proc.waitForLine(/^Forwarding (https:\/\/(\S+?)(?::\d+)?) -> /);
  return {
    proc,
    url: match[1]!,
    hostname: match[2]!,
    close: () => proc.kill('SIGINT'),
  };
}

/** Runs `svc <args>` to completion (version, bad tokens…). */
export async function runAgent(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawnNode(AGENT_BIN, args, env, 'agent');
  const { code } = await proc.exited;
  return { code, stdout: proc.lines.join('\n'), stderr: proc.stderrLines.join('\n') };
}
