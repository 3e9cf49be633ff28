export { Cluster, LEASE_MS, RENEW_MS, type ClusterDeps } from './cluster.js';
export { notifyNodes } from './cluster-bus.js';
