import type { Logger } from 'pino';
import pg from 'pg';

/** The PostgreSQL channel every node listens on. */
export const CLUSTER_CHANNEL = 'svc_cluster';
/** Pause before a lost LISTEN connection is opened again. */
const RECONNECT_MS = 1_000;
/** Messages kept while the connection is down, sent once it is back; older ones beyond this are dropped. */
const MAX_PENDING = 1_000;

/** What nodes tell each other at once (NOTIFY); the tables stay the truth. */
export type ClusterMessage =
  /**
   * A node claimed a hostname (its agent is held there now); `g` the agent's group, `c` when it was
   * bound, `r` its routes as JSON, or `R` when they are too long for a notification (read the row).
   */
  | { k: 'route'; n: string; h: string; t: string; a: string; l: string; e: number; g?: string; c?: number; p?: 'tls'; r?: string; R?: 1 }
  /** A node let a hostname go. */
  | { k: 'unroute'; n: string; h: string }
  /** A node joined, or left (`gone`). */
  | { k: 'node'; n: string; gone?: 1 }
  /** A key was revoked: every node drops the agents using it. */
  | { k: 'revoke'; key: string; msg: string }
  /** A tunnel was deleted (or its domain removed): the node holding it releases it. */
  | { k: 'release'; t: string; msg: string }
  /** A custom domain was removed on node `n`: the others drop from memory the certificates it no longer covers. */
  | { k: 'forget'; n: string; d: string }
  /** Account `a` changed plan (`svc-server account plan`): nodes re-read its limits now, not at their next refresh. */
  | { k: 'plan'; a: string };

export interface ClusterBusOptions {
  databaseUrl: string;
  log: Logger;
  onMessage(message: ClusterMessage): void;
  /** The LISTEN connection is (again) up: whatever was said while it was down is lost, reload. */
  onListening(): void;
}

/**
 * LISTEN/NOTIFY on one dedicated PostgreSQL connection (a pooled one would be handed to other
 * queries and lose its LISTEN). Reconnects by itself; `onListening` after each (re)connect lets
 * the node reload what it may have missed.
 */
export class ClusterBus {
  private client: pg.Client | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  /**
   * Said while the connection was down. Routes would be caught up by the reload anyway, but a
   * revocation or a release must still reach the other nodes, so everything waits here.
   */
  private pending: ClusterMessage[] = [];

  constructor(private readonly options: ClusterBusOptions) {}

  /** Connects and listens; rejects when the first connection fails. */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Tells every node (this one too); while the connection is down, as soon as it is back. */
  async publish(message: ClusterMessage): Promise<void> {
    const client = this.client;
    if (!client) return this.keep(message);
    try {
      await notify(client, message);
    } catch (error) {
      this.options.log.warn({ err: error, kind: message.k }, 'cluster notification not sent yet; kept for the reconnect');
      this.keep(message);
    }
  }

  private keep(message: ClusterMessage): void {
    if (this.closed) return;
    this.pending.push(message);
    if (this.pending.length > MAX_PENDING) this.pending.shift();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    client.on('notification', (note) => {
      if (note.channel !== CLUSTER_CHANNEL || !note.payload) return;
      let message: ClusterMessage;
      try {
        message = JSON.parse(note.payload) as ClusterMessage;
      } catch {
        return;
      }
      this.options.onMessage(message);
    });
    await client.connect();
    await client.query(`listen ${CLUSTER_CHANNEL}`);
    if (this.closed) {
      await client.end();
      return;
    }
    this.client = client;
    const pending = this.pending;
    this.pending = [];
    for (const message of pending) await this.publish(message);
    this.options.onListening();
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.options.log.warn({ err: error }, 'cluster notifications lost; reconnecting');
    void client.end().catch(() => undefined);
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.connect().catch((error: unknown) => {
        this.options.log.warn({ err: error }, 'cluster notifications still down');
        this.schedule();
      });
    }, RECONNECT_MS);
    this.timer.unref();
  }
}

/**
 * Tells every node listening on `databaseUrl` once, from a process that is not a node (the
 * account command): one short connection, nothing kept if it fails.
 */
export async function notifyNodes(databaseUrl: string, message: ClusterMessage): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await notify(client, message);
  } finally {
    await client.end();
  }
}

/** One message on the nodes' channel, from whichever connection sends it. */
async function notify(client: pg.Client, message: ClusterMessage): Promise<void> {
  await client.query('select pg_notify($1, $2)', [CLUSTER_CHANNEL, JSON.stringify(message)]);
}
