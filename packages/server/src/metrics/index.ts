export { createMetrics, type ClusterStats, type Metrics, type MetricsSources, type ObservedExchange } from './metrics.js';
export { Registry, Counter, METRICS_CONTENT_TYPE, type Labels } from './registry.js';
