// Records of the cluster tables: which nodes share the database, and which node holds the agent
// of each live hostname. A route is a lease: valid until `expiresAt` unless its node renews it.

/** One edge node, as its heartbeat last recorded it. */
export interface ClusterNode {
  nodeId: string;
  /** Where the other nodes reach this node's internal listener (`http://host:port`). */
  url: string;
  startedAt: number;
  heartbeatAt: number;
  /** Agent sessions held at the last heartbeat. */
  sessions: number;
  /** Live tunnels held at the last heartbeat. */
  tunnels: number;
}

/** A live hostname and the node holding its agent session. */
export interface ClusterRoute {
  hostname: string;
  nodeId: string;
  tunnelId: string;
  accountId: string;
  /** The agent's local address, for the page a visitor sees when the agent cannot reach it. */
  localAddr: string;
  /** Date.now() after which the route is void unless renewed. */
  expiresAt: number;
  /** The agent process holding it (several sessions of one agent share it); '' for an agent that names none. */
  group: string;
  /** When the binding behind this claim was made (Date.now()): between two agents, the later one holds the name. */
  claimedAt: number;
  /** `tls` for a TLS passthrough tunnel (other nodes read SNI for it); absent: HTTP or TCP. */
  proto?: 'tls';
  /** The binding's routes as JSON (`[{path, local}]`), for the records and pages of the other nodes; absent: none. */
  routes?: string;
}

export interface ClusterRepo {
  /** Records (or refreshes) a node and its heartbeat. */
  upsertNode(node: ClusterNode): Promise<void>;
  /** Every node, by id. */
  listNodes(): Promise<ClusterNode[]>;
  /** A node leaves; its routes go with it. */
  deleteNode(nodeId: string): Promise<void>;
  /** Records a node's claim on a hostname (other nodes' claims on it stay). */
  upsertRoute(route: ClusterRoute): Promise<void>;
  /** Every node's claim on a hostname, expired or not. */
  routesFor(hostname: string): Promise<ClusterRoute[]>;
  /** Drops a node's claim on a hostname; another node's claim is left alone. True when one was dropped. */
  deleteRoute(hostname: string, nodeId: string): Promise<boolean>;
  /** Extends every lease of a node to `expiresAt`; returns how many it holds in the store. */
  renewRoutes(nodeId: string, expiresAt: number): Promise<number>;
  /** Routes whose lease runs past `now`. */
  liveRoutes(now: number): Promise<ClusterRoute[]>;
  /** Deletes routes that expired before `before`; returns the nodes they belonged to. */
  reapRoutes(before: number): Promise<string[]>;
}
