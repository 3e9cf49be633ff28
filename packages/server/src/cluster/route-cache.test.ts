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

  it('a renewal keeps the binding made for the route; a takeover by another node drops it', () => {
    const cache = new RouteCache();
    cache.set(route());
    const entry = cache.get('app.example.test', 0)!;
    entry.binding = { tunnelId: 'tun_1' } as never;
    cache.set(route({ expiresAt: 20_000 }));
    assert.equal(cache.get('app.example.test', 15_000), entry);
    cache.set(route({ nodeId: 'node-b', tunnelId: 'tun_2', expiresAt: 30_000 }));
    const moved = cache.get('app.example.test', 25_000)!;
    assert.equal(moved.binding, undefined);
    assert.equal(moved.route.nodeId, 'node-b');
    assert.equal(cache.byTunnelId('tun_1', 0), undefined);
  });

  it('a late goodbye of the previous holder leaves the new claim; a departed node takes its routes along', () => {
    const cache = new RouteCache();
    cache.set(route({ nodeId: 'node-b' }));
    cache.delete('app.example.test', 'node-a');
    assert.ok(cache.get('app.example.test', 0));
    cache.set(route({ hostname: 'other.example.test', tunnelId: 'tun_9', nodeId: 'node-c' }));
    cache.dropNode('node-b');
    assert.equal(cache.get('app.example.test', 0), undefined);
    assert.ok(cache.get('other.example.test', 0));
    assert.equal(cache.countForAccount('acc_1', 0), 1);
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
