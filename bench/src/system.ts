import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ipcClient, type MemorySample } from './ipc.js';
import { AGENT_BIN, BENCH_DIST, type Proc, SERVER_BIN, spawnNode, tempDir } from './proc.js';

/** Subdomain of the benchmark's main tunnel: wrk sends `Host: x.localhost`. */
export const TUNNEL_SUBDOMAIN = 'x';
export const TUNNEL_HOST = `${TUNNEL_SUBDOMAIN}.localhost`;

/** Limits high enough for 1,000 tunnels and many GiB of bench traffic on the local account (the cluster bench's too). */
const BENCH_PLANS = JSON.stringify({ free: { tunnels: 100_000, bandwidthBytes: 1e15 } });

/** The real processes of one benchmark run. */
export interface BenchSystem {
  origin: Proc;
  originPort: number;
  /** The same origin over HTTP/2 with TLS (a self-signed certificate for x.localhost). */
  originH2Port: number;
  server: Proc;
  /** Edge HTTP port (visitors and the agent's session both use it). */
  httpPort: number;
  /** `http://localhost:<httpPort>`, what SVC_SERVER is set to. */
  serverUrl: string;
  token: string;
  agent: Proc;
  /** Edge HTTPS port and the dev CA that signs its certificates (for an agent session over TLS). */
  httpsPort: number;
  devCaFile: string;
  /** Starts one more `svc http` for the same origin on `subdomain`, over TLS to the edge or not. */
  /** Starts another agent on the origin under `subdomain`; `args` are extra `svc http` flags (access rules…). */
  startAgent(subdomain: string, tls: boolean, args?: string[], nodeArgs?: string[]): Promise<Proc>;
  /** Every process of the system still running: origin, edge, and each agent started so far. */
  processIds(): number[];
  /** Memory of the edge process after a forced GC (through the preloaded probe). */
  edgeMemory(): Promise<MemorySample>;
  /** Any other command of the edge's preloaded probe (edge-probe.ts). */
  edgeProbe(cmd: string, args?: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

export interface SystemOptions {
  /** Extra node flags for the server process and the agent process (e.g. --cpu-prof). */
  serverNodeArgs?: string[];
  agentNodeArgs?: string[];
  /** SVC_* variables for the server on top of the benchmark's own. */
  serverEnv?: Record<string, string>;
}

/** Starts the benchmark's origin (origin-main.ts), adds it to `started` and reads its two ports. */
export async function spawnOrigin(started: Proc[]): Promise<{ origin: Proc; originPort: number; originH2Port: number }> {
  const origin = spawnNode(path.join(BENCH_DIST, 'origin-main.js'), [], { label: 'origin' });
  started.push(origin);
  const originPort = Number((await origin.waitForLine(/^origin listening on (\d+)$/))[1]);
  const originH2Port = Number((await origin.waitForLine(/^origin h2 listening on (\d+)$/))[1]);
  return { origin, originPort, originH2Port };
}

/** How spawnServer starts one `svc-server start`. */
export interface ServerSpawn {
  label: string;
  dataDir: string;
  /** Added to the benchmark's own settings (ports 0 on loopback, high limits). */
  env?: Record<string, string>;
  nodeArgs?: string[];
  ipc?: boolean;
}

/** Starts `svc-server start` on ports 0 with the benchmark's limits, adds it to `started` and reads its HTTP port. */
export async function spawnServer(started: Proc[], spawn: ServerSpawn): Promise<{ proc: Proc; httpPort: number }> {
  const { dataDir, env, ...node } = spawn;
  const proc = spawnNode(SERVER_BIN, ['start'], {
    ...node,
    env: {
      SVC_DATA_DIR: dataDir,
      SVC_HTTP_PORT: '0',
      SVC_HTTPS_PORT: '0',
      SVC_BIND_HOST: '127.0.0.1',
      SVC_PLANS: BENCH_PLANS,
      // --sessions opens up to 50,000 sessions of the one local account.
      SVC_MAX_SESSIONS: '100000',
      SVC_MAX_ACCOUNT_SESSIONS: '100000',
      ...env,
    },
  });
  started.push(proc);
  return { proc, httpPort: Number((await proc.waitForLine(/REST API\s+http:\/\/[^:]+:(\d+)\/v1/))[1]) };
}

/** The local account's API token, printed by a server's first start. */
export async function firstToken(server: Proc): Promise<string> {
  return (await server.waitForLine(/^\s+(svc_[A-Za-z0-9_-]{43})$/))[1]!;
}

/**
 * Starts origin, `svc-server start` and `svc http` like the e2e harness does: ports 0, read
 * back from the banner, the token from the first-start output. The server gets --expose-gc and
 * the benchmark's IPC probe preloaded, nothing else differs from a user's start.
 */
export async function startSystem(options: SystemOptions = {}): Promise<BenchSystem> {
  const data = await tempDir('svc-bench-');
  const started: Proc[] = [];
  try {
    const { origin, originPort, originH2Port } = await spawnOrigin(started);
    const { proc: server, httpPort } = await spawnServer(started, {
      label: 'server',
      dataDir: data.dir,
      ipc: true,
      nodeArgs: ['--expose-gc', '--import', pathToFileURL(path.join(BENCH_DIST, 'edge-probe.js')).href, ...(options.serverNodeArgs ?? [])],
      ...(options.serverEnv ? { env: options.serverEnv } : {}),
    });
    const httpsPort = Number((await server.waitForLine(/tunnels\s+https:\/\/\S+:(\d+) /))[1]);
    const devCaFile = (await server.waitForLine(/dev CA\s+(\S+)$/))[1]!;
    const token = await firstToken(server);
    const serverUrl = `http://localhost:${httpPort}`;
    const call = ipcClient(server.child);

    const startAgent = async (subdomain: string, tls: boolean, nodeArgs: string[] = [], args: string[] = []): Promise<Proc> => {
      const env: Record<string, string> = tls
        ? { SVC_SERVER: `https://localhost:${httpsPort}`, SVC_CA_FILE: devCaFile }
        : { SVC_SERVER: serverUrl };
      const proc = spawnNode(AGENT_BIN, ['http', `127.0.0.1:${originPort}`, ...args], {
        label: tls ? `agent-tls-${subdomain}` : `agent-${subdomain}`,
        nodeArgs,
        env: { ...env, SVC_TOKEN: token, SVC_SUBDOMAIN: subdomain },
      });
      started.push(proc);
      await proc.waitForLine(/^Forwarding https:\/\//);
      proc.drainStdout();
      return proc;
    };
    const agent = await startAgent(TUNNEL_SUBDOMAIN, false, options.agentNodeArgs);

    return {
      origin,
      originPort,
      originH2Port,
      server,
      httpPort,
      serverUrl,
      token,
      agent,
      httpsPort,
      devCaFile,
      startAgent: (subdomain, tls, args, nodeArgs) => startAgent(subdomain, tls, nodeArgs, args),
      processIds: () => started.filter((proc) => proc.child.exitCode === null && proc.child.signalCode === null).map((proc) => proc.pid),
      edgeMemory: () => call('mem') as Promise<MemorySample>,
      edgeProbe: call,
      async close() {
        // Agents first (SIGINT: a clean unbind, as Ctrl-C), then the server, then the origin.
        for (const proc of started) if (proc !== server && proc !== origin) await proc.stop('SIGINT');
        await server.stop('SIGTERM');
        await origin.stop('SIGTERM');
        await data.remove();
      },
    };
  } catch (error) {
    for (const proc of started.reverse()) await proc.stop('SIGKILL');
    await data.remove();
    throw error;
  }
}

/** Starts the SDK probe process (sdk-probe.ts) against a running system. */
export function startSdkProbe(system: BenchSystem): {
  proc: Proc;
  call: (cmd: string, args?: Record<string, unknown>) => Promise<unknown>;
} {
  const proc = spawnNode(
    path.join(BENCH_DIST, 'sdk-probe.js'),
    [system.serverUrl, system.token, `127.0.0.1:${system.originPort}`, String(system.httpPort)],
    { label: 'sdk-probe', ipc: true, nodeArgs: ['--expose-gc'] },
  );
  return { proc, call: ipcClient(proc.child) };
}
