import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterRoute } from '../store/index.js';
import { RouteCache } from './route-cache.js';

const route = (over: Partial<ClusterRoute> = {}): ClusterRoute => ({
  hostname: 'app.example.test',
  nodeId: 'node-a',
  tunnelId: 'tun_1',
  accountId: 'acc_1',
  localAddr: 'localhost:3000',
  expiresAt: 10_000,
  group: '',
  claimedAt: 1,
  ...over,
});

describe('RouteCache', () => {
  it('answers a route until its lease runs out, by hostname and by tunnel id', () => {
    const cache = new RouteCache();
    cache.set(route());
    assert.equal(cache.get('app.example.test', 9_999)?.route.nodeId, 'node-a');
    assert.equal(cache.byTunnelId('tun_1', 9_999)?.route.hostname, 'app.example.test');
    assert.equal(cache.get('app.example.test', 10_000), undefined);
    assert.equal(cache.byTunnelId('tun_1', 10_000), undefined);
  });

  it('lists the hostnames with a live claim on some node, each once (the ports every node listens on come from them)', () => {
    const cache = new RouteCache();
    cache.set(route({ hostname: 'example.test:20417', nodeId: 'node-a', expiresAt: 10_000 }));
    cache.set(route({ hostname: 'example.test:20417', nodeId: 'node-b', expiresAt: 20_000 }));
    cache.set(route({ hostname: 'example.test:20418', tunnelId: 'tun_2', expiresAt: 5_000 }));
    assert.deepEqual([...cache.liveHostnames(4_999)].sort(), ['example.test:20417', 'example.test:20418']);
    assert.deepEqual([...cache.liveHostnames(10_000)], ['example.test:20417']);
    cache.delete('example.test:20417', 'node-b');
    assert.deepEqual([...cache.liveHostnames(10_000)], []);
  });

  it('a renewal keeps the binding made for the route; a new claim of the same node drops it', () => {
    const cache = new RouteCache();
    cache.set(route());
    const entry = cache.get('app.example.test', 0)!;
    entry.binding = { tunnelId: 'tun_1' } as never;
    cache.set(route({ expiresAt: 20_000 }));
    assert.equal(cache.get('app.example.test', 15_000), entry);
    cache.set(route({ tunnelId: 'tun_2', expiresAt: 30_000, claimedAt: 2 }));
    const fresh = cache.get('app.example.test', 25_000)!;
    assert.equal(fresh.binding, undefined);
    assert.equal(cache.byTunnelId('tun_1', 0), undefined);
  });

  it('a claim with other routes (read from the row after a notification without them) drops the binding made without them', () => {
    const cache = new RouteCache();
    cache.set(route());
    const entry = cache.byNode('app.example.test', 'node-a')!;
    entry.binding = { tunnelId: 'tun_1' } as never;
    cache.set(route({ routes: '[{"path":"/api","local":"localhost:4000"}]' }));
    const fresh = cache.byNode('app.example.test', 'node-a')!;
    assert.notEqual(fresh, entry);
    assert.equal(fresh.binding, undefined);
    assert.equal(fresh.route.routes, '[{"path":"/api","local":"localhost:4000"}]');
  });

  it('a hostname held on two nodes: the latest claim on a usable node serves, either one alone too', () => {
    const cache = new RouteCache();
    cache.set(route({ group: 'g1' }));
    cache.set(route({ nodeId: 'node-b', group: 'g1', claimedAt: 5 }));
    assert.equal(cache.get('app.example.test', 0)?.route.nodeId, 'node-b');
    assert.equal(cache.get('app.example.test', 0, (node) => node !== 'node-b')?.route.nodeId, 'node-a');
    assert.equal(
      cache.get('app.example.test', 0, () => false),
      undefined,
    );
    assert.equal([...cache.forAccount('acc_1', 0)].length, 1);
    cache.delete('app.example.test', 'node-b');
    assert.equal(cache.get('app.example.test', 0)?.route.nodeId, 'node-a');
    assert.ok(cache.byTunnelId('tun_1', 0));
    cache.delete('app.example.test', 'node-a');
    assert.equal(cache.byTunnelId('tun_1', 0), undefined);
    assert.equal(cache.size, 0);
  });

  it("a node's goodbye leaves the other nodes' claims; a departed node takes its routes along", () => {
    const cache = new RouteCache();
    cache.set(route({ nodeId: 'node-b' }));
    cache.delete('app.example.test', 'node-a');
    assert.ok(cache.get('app.example.test', 0));
    cache.set(route({ hostname: 'other.example.test', tunnelId: 'tun_9', nodeId: 'node-c' }));
    cache.dropNode('node-b');
    assert.equal(cache.get('app.example.test', 0), undefined);
    assert.ok(cache.get('other.example.test', 0));
    assert.equal([...cache.forAccount('acc_1', 0)].length, 1);
  });

  it('a reload replaces the copy: routes gone from the table are forgotten', () => {
    const cache = new RouteCache();
    cache.set(route());
    cache.set(route({ hostname: 'gone.example.test', tunnelId: 'tun_2' }));
    cache.replaceAll([route({ expiresAt: 50_000 })]);
    assert.equal(cache.size, 1);
    assert.equal(cache.get('app.example.test', 40_000)?.route.expiresAt, 50_000);
    assert.equal(cache.get('gone.example.test', 0), undefined);
  });
});
