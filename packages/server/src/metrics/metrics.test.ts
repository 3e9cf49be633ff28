import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMetrics } from './metrics.js';
import { Registry } from './registry.js';

describe('Registry', () => {
  it('renders HELP, TYPE and samples with escaped label values', () => {
    const registry = new Registry();
    const counter = registry.counter('x_total', 'An x.');
    counter.inc({ path: 'a"b\\c\nd' }, 2);
    counter.inc({ path: 'a"b\\c\nd' });
    registry.collect('y', 'A y.', 'gauge', () => 1.5);
    assert.equal(
      registry.render(),
      '# HELP x_total An x.\n# TYPE x_total counter\nx_total{path="a\\"b\\\\c\\nd"} 3\n# HELP y A y.\n# TYPE y gauge\ny 1.5\n',
    );
  });
});

describe('createMetrics', () => {
  it('covers sessions, tunnels, requests by status class, bytes, inspector and flush lag', () => {
    const metrics = createMetrics({
      liveSessions: () => 2,
      liveTunnels: () => 3,
      inspector: () => ({ queueDepth: 4, dropped: 5, written: 6, streamSubscribers: 7 }),
      usageFlushLagMs: () => 1500,
    });
    metrics.observe({ status: 200, bytesIn: 10, bytesOut: 100 });
    metrics.observe({ status: 204, bytesIn: 0, bytesOut: 0 });
    metrics.observe({ status: 502, bytesIn: 1, bytesOut: 2 });
    metrics.observe({ status: 0, bytesIn: 0, bytesOut: 0 });
    const text = metrics.render();
    for (const line of [
      'svc_agent_sessions 2',
      'svc_tunnels 3',
      'svc_requests_total{class="1xx"} 0',
      'svc_requests_total{class="2xx"} 2',
      'svc_requests_total{class="5xx"} 1',
      'svc_requests_total{class="none"} 1',
      'svc_transfer_bytes_total{direction="in"} 11',
      'svc_transfer_bytes_total{direction="out"} 102',
      'svc_inspector_queue_depth 4',
      'svc_inspector_dropped_total 5',
      'svc_inspector_written_total 6',
      'svc_inspector_stream_subscribers 7',
      'svc_usage_flush_lag_seconds 1.5',
    ]) {
      assert.ok(text.split('\n').includes(line), `missing ${line} in\n${text}`);
    }
    assert.match(text, /# TYPE svc_requests_total counter\n/);
  });

  it('exports the cluster families only for a node in a cluster, read at render time', () => {
    const base = {
      liveSessions: () => 0,
      liveTunnels: () => 0,
      inspector: () => ({ queueDepth: 0, dropped: 0, written: 0, streamSubscribers: 0 }),
      usageFlushLagMs: () => 0,
    };
    assert.doesNotMatch(createMetrics(base).render(), /svc_cluster_/);
    const stats = { forwardedOut: 3, forwardedIn: 1, peerLinks: 2, leaseRenewals: 7 };
    const metrics = createMetrics({ ...base, cluster: () => stats });
    stats.forwardedOut = 4;
    const lines = metrics.render().split('\n');
    for (const line of [
      '# TYPE svc_cluster_forwarded_requests_total counter',
      'svc_cluster_forwarded_requests_total{direction="out"} 4',
      'svc_cluster_forwarded_requests_total{direction="in"} 1',
      '# TYPE svc_cluster_peer_links gauge',
      'svc_cluster_peer_links 2',
      '# TYPE svc_cluster_lease_renewals_total counter',
      'svc_cluster_lease_renewals_total 7',
    ]) {
      assert.ok(lines.includes(line), `missing ${line}`);
    }
  });
});
