import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { loadConfig, type ServerConfig } from '../config.js';
import { openStore } from '../store/index.js';
import { runClusterCommand } from './cluster-command.js';

// `svc-server cluster status` against a real store (SQLite holds the cluster tables too), with a
// fixed clock so heartbeat ages and up/down are exact.
describe('svc-server cluster status', () => {
  const NOW = 1_800_000_000_000;
  let dir: string;
  let config: ServerConfig;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-cluster-cli-'));
    config = loadConfig({ SVC_DATA_DIR: dir });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const out = new PassThrough().on('data', (d: Buffer) => (stdout += d.toString()));
    const err = new PassThrough().on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await runClusterCommand(args, config, { stdout: out, stderr: err }, () => NOW);
    return { code, stdout, stderr };
  }

  it('says so when no node has joined a cluster', async () => {
    const { code, stdout } = await run(['status']);
    assert.equal(code, 0);
    assert.equal(stdout, 'No node has joined a cluster on this store: each svc-server here runs alone (SVC_NODE_URL is unset).\n');
  });

  it('lists each node, up while its heartbeat is younger than a lease, with sessions and tunnels held', async () => {
    const store = await openStore({ dataDir: dir });
    try {
      await store.cluster.upsertNode({
        nodeId: 'edge-a',
        url: 'http://10.0.0.5:8090',
        startedAt: NOW - 60_000,
        heartbeatAt: NOW - 2_000,
        sessions: 2,
        tunnels: 3,
      });
      await store.cluster.upsertNode({
        nodeId: 'edge-b',
        url: 'http://10.0.0.6:8090',
        startedAt: NOW - 60_000,
        heartbeatAt: NOW - 10_000,
        sessions: 1,
        tunnels: 1,
      });
      for (const hostname of ['a.example.test', 'b.example.test', 'example.test:20001']) {
        await store.cluster.upsertRoute({
          hostname,
          nodeId: 'edge-a',
          tunnelId: `tun_${hostname}`,
          accountId: 'acc_1',
          localAddr: 'localhost:3000',
          expiresAt: NOW + 5_000,
          group: '',
          claimedAt: NOW,
          ...(hostname.startsWith('b.') ? { proto: 'tls' as const } : {}),
        });
      }
    } finally {
      await store.close();
    }
    const table = await run(['status']);
    assert.equal(table.code, 0);
    assert.equal(
      table.stdout,
      [
        'NODE    URL                   STATE  HEARTBEAT  SESSIONS  TUNNELS  TCP  TLS  UP SINCE',
        'edge-a  http://10.0.0.5:8090  up     2s ago     2         3        1    1    2027-01-15T07:59:00Z',
        'edge-b  http://10.0.0.6:8090  down   10s ago    1         0        0    0    2027-01-15T07:59:00Z',
        '',
      ].join('\n'),
    );
    const json = JSON.parse((await run(['status', '--json'])).stdout) as {
      nodes: Array<{ nodeId: string; state: string; routes: number; tcp: number; tls: number }>;
    };
    assert.deepEqual(
      json.nodes.map((n) => [n.nodeId, n.state, n.routes, n.tcp, n.tls]),
      [
        ['edge-a', 'up', 3, 1, 1],
        ['edge-b', 'down', 0, 0, 0],
      ],
    );
  });

  it('refuses anything but status [--json]', async () => {
    for (const args of [[], ['list'], ['status', '--yaml']]) {
      const { code, stderr } = await run(args);
      assert.equal(code, 2);
      assert.equal(stderr, 'usage: svc-server cluster status [--json]\n');
    }
  });
});
