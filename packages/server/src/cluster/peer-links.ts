import { request } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { FEATURES_HEADER, FEATURE_TRAILERS, HEARTBEAT_MISSES, LOCAL_FEATURES, Mux, parseFeatures } from '@svcrouter/protocol';
import type { Binding } from '../edge/index.js';
import {
  dialCredentials,
  isValidProof,
  PEER_AUTH_HEADER,
  PEER_NODE_HEADER,
  PEER_PATH,
  PEER_PROOF_HEADER,
  PEER_UPGRADE,
} from './peer-auth.js';

/** First pause before dialing a peer again; doubles per failure up to MAX_REDIAL_MS. */
const REDIAL_MS = 250;
const MAX_REDIAL_MS = 10_000;

export interface PeerLinksOptions {
  nodeId: string;
  secret: string;
  heartbeatMs: number;
  log: Logger;
}

/** One connected link to a peer: what a remote binding's requests travel over. */
export class LinkSession {
  constructor(
    readonly nodeId: string,
    readonly mux: Mux,
  ) {}

  get isClosed(): boolean {
    return this.mux.isClosed;
  }

  /** A peer link has no agent of its own to tell: the holder releases its tunnels itself. */
  release(): Binding | undefined {
    return undefined;
  }
}

/**
 * This node's links to its peers, one per live node, dialed from here and kept up: redialed
 * with a growing pause while the node is listed alive, closed once it is not. Streams go one
 * way on a link (from this node to the peer); the peer's own link to this node carries the
 * other direction.
 */
export class PeerLinks {
  private readonly dialers = new Map<string, PeerDialer>();

  constructor(private readonly options: PeerLinksOptions) {}

  /** Keeps links to exactly these nodes (this node excluded), redialing a node whose URL changed. */
  sync(nodes: ReadonlyArray<{ nodeId: string; url: string }>): void {
    const wanted = new Map(nodes.filter((n) => n.nodeId !== this.options.nodeId).map((n) => [n.nodeId, n.url]));
    for (const [nodeId, dialer] of this.dialers) {
      if (wanted.get(nodeId) === dialer.url) continue;
      dialer.stop();
      this.dialers.delete(nodeId);
    }
    for (const [nodeId, url] of wanted) {
      if (this.dialers.has(nodeId)) continue;
      const dialer = new PeerDialer(nodeId, url, this.options);
      this.dialers.set(nodeId, dialer);
      dialer.dial();
    }
  }

  /** The connected link to a node, if any. */
  session(nodeId: string): LinkSession | undefined {
    const session = this.dialers.get(nodeId)?.session;
    return session && !session.isClosed ? session : undefined;
  }

  /** Node ids with a connected link. */
  connected(): string[] {
    return [...this.dialers.keys()].filter((nodeId) => this.session(nodeId) !== undefined);
  }

  /** Streams open on the links: visitors' requests this node carries to its peers. */
  openStreams(): number {
    let open = 0;
    for (const nodeId of this.dialers.keys()) open += this.session(nodeId)?.mux.streamCount ?? 0;
    return open;
  }

  /** Whether every peer wanted has a connected link. */
  allConnected(): boolean {
    for (const nodeId of this.dialers.keys()) if (this.session(nodeId) === undefined) return false;
    return true;
  }

  close(): void {
    for (const dialer of this.dialers.values()) dialer.stop();
    this.dialers.clear();
  }
}

class PeerDialer {
  session: LinkSession | undefined;
  private stopped = false;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly nodeId: string,
    readonly url: string,
    private readonly options: PeerLinksOptions,
  ) {}

  dial(): void {
    if (this.stopped) return;
    const { nodeId: self, secret, log } = this.options;
    const target = new URL(this.url);
    const credentials = dialCredentials(secret, self, this.nodeId);
    const req = request({
      hostname: target.hostname.replace(/^\[|\]$/g, ''),
      port: Number(target.port || 80),
      path: PEER_PATH,
      agent: false,
      timeout: 5_000,
      headers: {
        connection: 'Upgrade',
        upgrade: PEER_UPGRADE,
        [PEER_NODE_HEADER]: self,
        [PEER_AUTH_HEADER]: credentials.header,
        [FEATURES_HEADER]: LOCAL_FEATURES,
      },
    });
    req.on('timeout', () => req.destroy(new Error('peer did not answer')));
    req.on('error', (error) => this.retry(`cannot reach the peer: ${error.message}`));
    req.on('response', (res) => {
      res.resume();
      const hint = res.statusCode === 401 ? ' (is SVC_CLUSTER_SECRET the same on every node?)' : '';
      this.retry(`the peer refused the link with ${res.statusCode}${hint}`, res.statusCode === 401 ? 'warn' : 'info');
    });
    req.on('upgrade', (res, socket: Socket, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      if (!isValidProof(secret, this.nodeId, credentials.nonce, res.headers[PEER_PROOF_HEADER] as string | undefined)) {
        socket.destroy();
        this.retry('the peer could not prove it holds the cluster secret', 'warn');
        return;
      }
      if (this.stopped) {
        socket.destroy();
        return;
      }
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 10_000);
      if (head.length > 0) socket.unshift(head);
      // A node of an older version in a rolling upgrade gets no TRAILERS frames.
      const mux = new Mux(socket, { role: 'dialer', peerTrailers: parseFeatures(res.headers[FEATURES_HEADER]).has(FEATURE_TRAILERS) });
      mux.startHeartbeat(this.options.heartbeatMs, this.options.heartbeatMs * HEARTBEAT_MISSES);
      const session = new LinkSession(this.nodeId, mux);
      this.session = session;
      this.failures = 0;
      log.info({ peer: this.nodeId, url: this.url }, 'peer link to node opened');
      mux.once('close', (error?: Error) => {
        if (this.session === session) this.session = undefined;
        this.retry(`link closed${error ? `: ${error.message}` : ''}`);
      });
    });
    req.end();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.session?.mux.close('peer left the cluster');
    this.session = undefined;
  }

  private retry(reason: string, level: 'info' | 'warn' = 'info'): void {
    if (this.stopped || this.timer) return;
    const pause = Math.min(MAX_REDIAL_MS, REDIAL_MS * 2 ** this.failures++);
    this.options.log[level]({ peer: this.nodeId, url: this.url, reason, retryInMs: pause }, 'peer link to node down');
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dial();
    }, pause);
    this.timer.unref();
  }
}
