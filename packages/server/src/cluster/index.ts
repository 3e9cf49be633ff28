// Several edge nodes sharing one PostgreSQL: node-to-node links and the internal listener, the
// leased route table, the LISTEN/NOTIFY bus, and release and revocation on every node (the
// cluster's Fleet). Driven by server.ts and the cluster command only.
// May use: hostname, store, edge.
export { Cluster, LEASE_MS, RENEW_MS, type ClusterDeps } from './cluster.js';
export { notifyNodes } from './cluster-bus.js';
