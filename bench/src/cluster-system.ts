import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { pollUntil } from '@svcrouter/testkit';
import { AGENT_BIN, type Proc, REPO_ROOT, spawnNode, tempDir } from './proc.js';
import { firstToken, spawnOrigin, spawnServer, TUNNEL_HOST, TUNNEL_SUBDOMAIN } from './system.js';

const run = promisify(execFile);
const PG_SCRIPT = path.join(REPO_ROOT, 'scripts/start-test-postgres.sh');
/** Any shared secret will do: the nodes only ever talk to each other on loopback. */
const CLUSTER_SECRET = 'bench-cluster-secret-0123456789abcdef';

/** Two edge nodes on one PostgreSQL, the agent connected to the first. */
export interface ClusterSystem {
  originPort: number;
  /** The node that holds the agent's session. */
  holder: { proc: Proc; httpPort: number };
  /** A node without the agent: it carries each request to the holder over the peer link. */
  entry: { proc: Proc; httpPort: number };
  agent: Proc;
  close(): Promise<void>;
}

/** A throwaway PostgreSQL from scripts/start-test-postgres.sh, or the one the caller names. */
async function startDatabase(givenUrl: string | undefined): Promise<{ url: string; stop(): Promise<void> }> {
  if (givenUrl) return { url: givenUrl, stop: async () => undefined };
  let started: { stdout: string; stderr: string };
  try {
    started = await run(PG_SCRIPT, [], { encoding: 'utf8' });
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim().split('\n').pop() ?? String(error);
    throw new Error(
      `the cluster bench needs PostgreSQL (apt-get install -y postgresql), or a database URL in SVC_BENCH_DATABASE_URL: ${detail}`,
    );
  }
  const dataDir = /postgres data dir: (\S+)/.exec(started.stderr)?.[1];
  return {
    url: started.stdout.trim(),
    stop: async () => {
      if (dataDir) await run(PG_SCRIPT, ['stop', dataDir]);
    },
  };
}

/**
 * Starts an origin, two `svc-server start` nodes sharing one PostgreSQL (each its own
 * SVC_NODE_ID and internal listener), and `svc http` on the first. Resolves once a request
 * entering the second node reaches the origin, so the route has travelled between them.
 */
export async function startCluster(databaseUrl: string | undefined): Promise<ClusterSystem> {
  const database = await startDatabase(databaseUrl);
  const dirs = [await tempDir('svc-bench-a-'), await tempDir('svc-bench-b-')];
  const started: Proc[] = [];
  const stopAll = async (signal: NodeJS.Signals): Promise<void> => {
    for (const proc of started.reverse()) await proc.stop(signal);
    for (const dir of dirs) await dir.remove();
    await database.stop();
  };
  try {
    const { originPort } = await spawnOrigin(started);
    const startNode = (nodeId: string, dataDir: string): Promise<{ proc: Proc; httpPort: number }> =>
      spawnServer(started, {
        label: `node-${nodeId}`,
        dataDir,
        env: {
          SVC_DATABASE_URL: database.url,
          SVC_NODE_ID: nodeId,
          SVC_NODE_URL: 'http://127.0.0.1:0',
          SVC_CLUSTER_SECRET: CLUSTER_SECRET,
        },
      });
    const holder = await startNode('a', dirs[0]!.dir);
    const token = await firstToken(holder.proc);
    const entry = await startNode('b', dirs[1]!.dir);
    const agent = spawnNode(AGENT_BIN, ['http', `127.0.0.1:${originPort}`], {
      label: 'agent',
      env: { SVC_SERVER: `http://localhost:${holder.httpPort}`, SVC_TOKEN: token, SVC_SUBDOMAIN: TUNNEL_SUBDOMAIN },
    });
    started.push(agent);
    await agent.waitForLine(/^Forwarding https?:\/\//);
    agent.drainStdout();
    await untilServed(entry.httpPort);
    return { originPort, holder, entry, agent, close: () => stopAll('SIGTERM') };
  } catch (error) {
    await stopAll('SIGKILL');
    throw error;
  }
}

/** Waits until the entry node routes the tunnel (its route cache hears of it through NOTIFY). */
function untilServed(port: number): Promise<void> {
  return pollUntil('the second node routing the tunnel to the first', async () => (await statusOf(port)) === 200, 200, 50);
}

/** The status of one GET /small for the tunnel's host on `port`, or 0 when the request failed. */
function statusOf(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/small', headers: { host: TUNNEL_HOST }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
  });
}
