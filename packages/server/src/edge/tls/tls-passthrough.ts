import type { Socket } from 'node:net';
import { IdTable } from '@svcrouter/protocol';
import { pickMember } from '../pool.js';
import type { Binding, Router } from '../router.js';
import { pipeTcpVisitor, type TcpPipeDeps } from '../tcp/tcp-pipe.js';
import { setVisitorSocketOptions } from '../tcp/visitor-socket-options.js';
import { CLIENT_HELLO_TIMEOUT_MS, peekServerName } from './sni-peek.js';

export interface TlsPassthroughDeps extends TcpPipeDeps {
  router: Router;
  /** The binding that carries `host` to the node holding its agent (cluster/); undefined when none or alone. */
  remoteBinding?(host: string): Binding | undefined;
  /** Hostnames other nodes route to TLS tunnels (cluster/ route cache); absent: 0. */
  remoteTlsCount?(): number;
  /** Whether the account is over its transfer quota: its connections are closed at once. */
  isOverBandwidth?(accountId: string): boolean;
  /** How long a ClientHello may take (default CLIENT_HELLO_TIMEOUT_MS). */
  helloTimeoutMs?: number;
}

/**
 * TLS passthrough on the edge's HTTPS port: while any node has a TLS tunnel bound, each new
 * connection's ClientHello is read for its server name; a TLS tunnel's name gets the raw
 * connection (ClientHello first) piped to its agent as a TCP tunnel's would be, every other name
 * goes to the edge's own TLS server as before. While no TLS tunnel is bound, nothing is read.
 */
export class TlsPassthrough {
  /** Not a Set: a connection each adds and removes one (see IdTable). */
  private readonly open = new IdTable<Socket>();

  constructor(private readonly deps: TlsPassthroughDeps) {}

  /** Whether connections must be read for SNI: some TLS tunnel is bound on this node or another. */
  get active(): boolean {
    return this.deps.router.tlsCount > 0 || (this.deps.remoteTlsCount?.() ?? 0) > 0;
  }

  /** The live TLS tunnel binding of `host` (a pool's next member), here or on another node. */
  bindingFor(host: string): Binding | undefined {
    let binding = this.deps.router.resolve(host);
    if (binding !== undefined && binding.proto !== 'tls') return undefined;
    if (binding?.pool !== undefined) binding = pickMember(binding.pool);
    if (binding === undefined) {
      const remote = this.deps.remoteBinding?.(host);
      if (remote?.proto === 'tls') binding = remote;
    }
    return binding === undefined || binding.session.isClosed ? undefined : binding;
  }

  /** Whether `host` names a TLS tunnel bound on this node (no certificate may be issued or shown for it). */
  isTlsHost(host: string): boolean {
    return this.deps.router.resolve(host)?.proto === 'tls';
  }

  /**
   * Takes a new connection of the HTTPS port: reads its SNI, then pipes it to a TLS tunnel or hands
   * it to `otherwise` (the edge's TLS server) paused, with the bytes read put back.
   */
  accept(socket: Socket, publicPort: number, otherwise: (socket: Socket) => void): void {
    peekServerName(
      socket,
      (serverName, head) => {
        const binding = serverName === undefined ? undefined : this.bindingFor(serverName);
        if (binding === undefined || serverName === undefined) {
          socket.unshift(head);
          return otherwise(socket);
        }
        if (this.deps.isOverBandwidth?.(binding.accountId) === true) return void socket.destroy();
        this.pipe(socket, binding, publicPort, serverName, head);
      },
      this.deps.helloTimeoutMs ?? CLIENT_HELLO_TIMEOUT_MS,
    );
  }

  /** Cuts every passthrough connection (shutdown). */
  close(): void {
    for (const socket of this.open.snapshot()) socket.destroy();
  }

  private pipe(socket: Socket, binding: Binding, port: number, serverName: string, head: Buffer): void {
    socket.resume();
    // The HTTPS port's listener serves every other host too: its sockets get the options one by one.
    setVisitorSocketOptions(socket);
    pipeTcpVisitor(socket, binding, port, this.deps, this.open, { serverName, head });
  }
}
