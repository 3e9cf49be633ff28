// Prometheus metrics: the registry and the gauges and counters GET /metrics renders; the sources
// are handed in as functions.
// May use: hostname.
export { createMetrics, type ClusterStats, type Metrics, type MetricsSources, type ObservedExchange } from './metrics.js';
export { Registry, Counter, METRICS_CONTENT_TYPE, type Labels } from './registry.js';
