export { Cluster, LEASE_MS, RENEW_MS, type ClusterDeps, type ClusterBinding } from './cluster.js';
export { notifyNodes } from './cluster-bus.js';
