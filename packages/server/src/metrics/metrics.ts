import { Registry } from './registry.js';

/** Where the gauges read their values; plain functions, so metrics imports nothing of ours. */
export interface MetricsSources {
  /** Agent sessions connected to this node. */
  liveSessions(): number;
  /** Tunnels live on this node. */
  liveTunnels(): number;
  inspector(): { queueDepth: number; dropped: number; written: number; streamSubscribers: number };
  /** Milliseconds since the usage meter's last successful flush. */
  usageFlushLagMs(): number;
  /** Streams (visitor requests, WebSockets) open on this node's agent sessions; absent: not exported. */
  openStreams?(): number;
  /** Agent sessions with no stream open; absent: not exported. */
  idleSessions?(): number;
  /** Sessions refused for the node's limits since start, and the node's limit; absent: not exported. */
  sessionLimits?(): { refusedNode: number; refusedAccount: number; maxSessions: number };
  /** This node's part in a cluster of edge nodes; absent on a single node (the families are not exported). */
  cluster?(): ClusterStats;
}

/** Counts of a node in a cluster. */
export interface ClusterStats {
  /** Visitor requests this node carried to the node holding their tunnel. */
  forwardedOut: number;
  /** Visitor requests other nodes carried here, for a tunnel held on this node. */
  forwardedIn: number;
  /** Links from this node to its peers that are open now. */
  peerLinks: number;
  /** Renewals of this node's leases (its heartbeat and route claims) that succeeded. */
  leaseRenewals: number;
}

/** The part of an edge exchange the counters need. */
export interface ObservedExchange {
  status: number;
  bytesIn: number;
  bytesOut: number;
}

export interface Metrics {
  /** Counts one finished visitor request; cheap, runs on the request path. */
  observe(exchange: ObservedExchange): void;
  /** The Prometheus text exposition (serve with METRICS_CONTENT_TYPE). */
  render(): string;
}

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/**
 * The server's metrics. Families:
 * - svc_agent_sessions, svc_tunnels (gauges)
 * - svc_requests_total{class="1xx".."5xx"|"none"}: visitor requests to tunnel hostnames;
 *   `none` when no status was sent (the visitor left first)
 * - svc_transfer_bytes_total{direction="in"|"out"}: body bytes, visitor→origin and back
 * - svc_inspector_queue_depth, svc_inspector_dropped_total, svc_inspector_written_total,
 *   svc_inspector_stream_subscribers
 * - svc_usage_flush_lag_seconds: time since the last successful usage flush
 * - svc_streams_open (gauge): streams open on agent sessions; back to 0 when idle, else a leak
 * - svc_agent_sessions_idle (gauge), svc_agent_sessions_max (gauge),
 *   svc_agent_sessions_refused_total{limit="node"|"account"}
 * - process_cpu_seconds_total, process_resident_memory_bytes: with the session gauges, what a
 *   quiet session costs this node (docs/performance.md, "How many agents per node")
 * - with several nodes: svc_cluster_forwarded_requests_total{direction="out"|"in"},
 *   svc_cluster_peer_links (gauge), svc_cluster_lease_renewals_total
 */
export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  registry.collect('svc_agent_sessions', 'Agent sessions connected to this node.', 'gauge', sources.liveSessions);
  registry.collect('svc_tunnels', 'Tunnels live on this node.', 'gauge', sources.liveTunnels);
  const requests = registry.counter('svc_requests_total', 'Visitor requests to tunnel hostnames, by status class.');
  const transfer = registry.counter(
    'svc_transfer_bytes_total',
    'Body bytes through the edge: in = visitor to origin, out = origin to visitor.',
  );
  registry.collect('svc_inspector_queue_depth', 'Inspector records waiting to be written.', 'gauge', () => sources.inspector().queueDepth);
  registry.collect(
    'svc_inspector_dropped_total',
    'Inspector records dropped (queue full, store write failed, or store still unavailable at shutdown).',
    'counter',
    () => sources.inspector().dropped,
  );
  registry.collect('svc_inspector_written_total', 'Inspector records written to the store.', 'counter', () => sources.inspector().written);
  registry.collect(
    'svc_inspector_stream_subscribers',
    'Open live request streams (GET /v1/requests/stream).',
    'gauge',
    () => sources.inspector().streamSubscribers,
  );
  registry.collect(
    'svc_usage_flush_lag_seconds',
    'Seconds since the usage meter last flushed to the store successfully.',
    'gauge',
    () => sources.usageFlushLagMs() / 1000,
  );
  if (sources.openStreams) {
    registry.collect('svc_streams_open', 'Streams open on the agent sessions of this node.', 'gauge', () => sources.openStreams?.() ?? 0);
  }
  if (sources.idleSessions) {
    registry.collect('svc_agent_sessions_idle', 'Agent sessions with no stream open.', 'gauge', () => sources.idleSessions?.() ?? 0);
  }
  const limits = sources.sessionLimits;
  if (limits) {
    registry.collect(
      'svc_agent_sessions_max',
      'Most agent sessions this node accepts (SVC_MAX_SESSIONS).',
      'gauge',
      () => limits().maxSessions,
    );
    registry.collect('svc_agent_sessions_refused_total', 'Agent sessions refused for a session limit, by limit.', 'counter', () => {
      const stats = limits();
      return [
        { labels: { limit: 'node' }, value: stats.refusedNode },
        { labels: { limit: 'account' }, value: stats.refusedAccount },
      ];
    });
  }
  registry.collect('process_cpu_seconds_total', 'User and system CPU time of this process, seconds.', 'counter', () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1e6;
  });
  registry.collect('process_resident_memory_bytes', 'Resident memory of this process, bytes.', 'gauge', () => process.memoryUsage.rss());
  const cluster = sources.cluster;
  if (cluster) {
    registry.collect(
      'svc_cluster_forwarded_requests_total',
      'Visitor requests carried between edge nodes: out = sent from here to the node holding the tunnel, in = received here from another node.',
      'counter',
      () => {
        const stats = cluster();
        return [
          { labels: { direction: 'out' }, value: stats.forwardedOut },
          { labels: { direction: 'in' }, value: stats.forwardedIn },
        ];
      },
    );
    registry.collect(
      'svc_cluster_peer_links',
      'Links from this node to other edge nodes that are open.',
      'gauge',
      () => cluster().peerLinks,
    );
    registry.collect(
      'svc_cluster_lease_renewals_total',
      "Successful renewals of this node's heartbeat and route leases in the shared database.",
      'counter',
      () => cluster().leaseRenewals,
    );
  }

  // Series resolved once: the request path does one array lookup and two additions.
  const byClass = STATUS_CLASSES.map((c) => requests.series({ class: c }));
  const noStatus = requests.series({ class: 'none' });
  const bytesIn = transfer.series({ direction: 'in' });
  const bytesOut = transfer.series({ direction: 'out' });

  return {
    observe(exchange) {
      (byClass[Math.floor(exchange.status / 100) - 1] ?? noStatus).inc();
      bytesIn.inc(exchange.bytesIn);
      bytesOut.inc(exchange.bytesOut);
    },
    render: () => registry.render(),
  };
}
