import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import {
  FEATURES_HEADER,
  FEATURE_TRAILERS,
  HEARTBEAT_MISSES,
  LOCAL_FEATURES,
  Mux,
  parseFeatures,
  type CallbackStream,
} from '@svcrouter/protocol';
import {
  acceptProof,
  checkDial,
  NonceMemory,
  PEER_AUTH_HEADER,
  PEER_NODE_HEADER,
  PEER_PATH,
  PEER_PROOF_HEADER,
  PEER_UPGRADE,
} from './peer-auth.js';

export interface PeerListenerOptions {
  nodeId: string;
  secret: string;
  host: string;
  port: number;
  heartbeatMs: number;
  log: Logger;
  /** A stream a peer opened: a visitor's request for a tunnel this node holds. */
  onStream(stream: CallbackStream): void;
}

const REFUSED =
  'HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: 24\r\n\r\n{"error":"unauthorized"}';
const NOT_FOUND = 'HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n';

/**
 * The internal listener (the port of SVC_NODE_URL): peers upgrade to a multiplexed link here,
 * authenticated with the cluster secret, and open one stream per visitor request they carry to
 * this node. Nothing else is served: every other request is a 404.
 */
export class PeerListener {
  private readonly server: Server;
  private readonly links = new Set<Mux>();
  private readonly nonces = new NonceMemory();

  constructor(private readonly options: PeerListenerOptions) {
    this.server = createServer((_req, res) => {
      res.writeHead(404, { connection: 'close', 'content-length': '0' }).end();
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.accept(req, socket, head));
    this.server.on('clientError', (_error, socket) => socket.destroy());
  }

  /** Starts listening; resolves with the port bound (the one asked, or a free one for 0). */
  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return (this.server.address() as AddressInfo).port;
  }

  /** Live links from peers. */
  get linkCount(): number {
    return this.links.size;
  }

  async close(): Promise<void> {
    for (const link of this.links) link.close('node shutting down');
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
  }

  private accept(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const { log, nodeId, secret } = this.options;
    const path = (req.url ?? '').split('?')[0];
    if (path !== PEER_PATH || (req.headers.upgrade ?? '').toLowerCase() !== PEER_UPGRADE) {
      socket.end(NOT_FOUND);
      return;
    }
    const from = req.headers[PEER_NODE_HEADER];
    const check = checkDial(secret, nodeId, typeof from === 'string' ? from : undefined, header(req, PEER_AUTH_HEADER), this.nonces);
    if (!check.ok) {
      log.warn(
        { peer: typeof from === 'string' ? from.slice(0, 100) : undefined, ip: req.socket.remoteAddress, reason: check.reason },
        'peer link refused',
      );
      socket.end(REFUSED);
      return;
    }
    const tcp = socket as Socket;
    tcp.setNoDelay?.(true);
    tcp.setKeepAlive?.(true, 10_000);
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${PEER_UPGRADE}\r\n${PEER_PROOF_HEADER}: ${acceptProof(secret, nodeId, check.nonce)}\r\n${FEATURES_HEADER}: ${LOCAL_FEATURES}\r\n\r\n`,
    );
    if (head.length > 0) socket.unshift(head);
    const link = new Mux(socket, {
      role: 'acceptor',
      peerTrailers: parseFeatures(req.headers[FEATURES_HEADER]).has(FEATURE_TRAILERS),
      onStream: (stream) => this.options.onStream(stream),
    });
    this.links.add(link);
    link.startHeartbeat(this.options.heartbeatMs, this.options.heartbeatMs * HEARTBEAT_MISSES);
    link.once('close', (error?: Error) => {
      this.links.delete(link);
      log.info({ peer: check.from, reason: error?.message }, 'peer link from node closed');
    });
    log.info({ peer: check.from }, 'peer link from node opened');
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}
