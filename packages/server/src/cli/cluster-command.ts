import { LEASE_MS } from '../cluster/index.js';
import type { ServerConfig } from '../config.js';
import { openStore, type ClusterNode } from '../store/index.js';
import type { CliIo } from './account-command.js';

const USAGE = 'usage: svc-server cluster status [--json]\n';

/** One node as `cluster status` shows it. */
interface NodeStatus extends ClusterNode {
  state: 'up' | 'down';
  /** Hostnames whose lease this node holds now. */
  routes: number;
  /** Of those, TCP tunnels' addresses (`<shared domain>:<port>`). */
  tcp: number;
  /** Of those, TLS passthrough tunnels' hostnames. */
  tls: number;
}

/**
 * `svc-server cluster status`: the nodes sharing this store, read from the table their
 * heartbeats renew. A node is `up` while its last heartbeat is younger than a lease; a node that
 * left cleanly is no longer listed.
 */
export async function runClusterCommand(
  args: string[],
  config: ServerConfig,
  io: Pick<CliIo, 'stdout' | 'stderr'>,
  now = Date.now,
): Promise<number> {
  const [action, ...rest] = args;
  const json = rest.length === 1 && rest[0] === '--json';
  if (action !== 'status' || (rest.length > 0 && !json)) {
    io.stderr.write(USAGE);
    return 2;
  }
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  let nodes: NodeStatus[];
  try {
    const at = now();
    const routes = await store.cluster.liveRoutes(at);
    nodes = (await store.cluster.listNodes()).map((node) => {
      const held = routes.filter((route) => route.nodeId === node.nodeId);
      return {
        ...node,
        state: node.heartbeatAt > at - LEASE_MS ? 'up' : 'down',
        routes: held.length,
        // A TCP tunnel's route is named `<shared domain>:<port>`: no hostname has a colon.
        tcp: held.filter((route) => route.hostname.includes(':')).length,
        tls: held.filter((route) => route.proto === 'tls').length,
      };
    });
    if (json) {
      io.stdout.write(`${JSON.stringify({ nodes }, null, 2)}\n`);
      return 0;
    }
    if (nodes.length === 0) {
      io.stdout.write('No node has joined a cluster on this store: each svc-server here runs alone (SVC_NODE_URL is unset).\n');
      return 0;
    }
    const rows = [
      ['NODE', 'URL', 'STATE', 'HEARTBEAT', 'SESSIONS', 'TUNNELS', 'TCP', 'TLS', 'UP SINCE'],
      ...nodes.map((node) => [
        node.nodeId,
        node.url,
        node.state,
        `${Math.max(0, Math.round((at - node.heartbeatAt) / 1000))}s ago`,
        String(node.sessions),
        String(node.routes),
        String(node.tcp),
        String(node.tls),
        new Date(node.startedAt).toISOString().replace(/\.\d+Z$/, 'Z'),
      ]),
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
    for (const row of rows)
      io.stdout.write(
        `${row
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd()}\n`,
      );
    return 0;
  } finally {
    await store.close();
  }
}
