import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { ErrorCode, Messages, Mux, SESSION_UPGRADE, type AgentMessage, type EdgeMessage, type SvcError } from '@svcrouter/protocol';
import { AgentSession } from './agent-session.js';
import type { Bound, SessionTunnel } from './session-tunnel.js';

// AgentSession's reconnect path against a scripted edge: real sockets and a real Mux on loopback,
// with the test deciding what each connection does with a bind.

type Bind = Extract<AgentMessage, { type: 'bind' }>;

/** One agent connection as the scripted edge sees it. */
interface EdgeConnection {
  mux: Mux;
  socket: Socket;
  received: AgentMessage[];
}

/** A loopback edge; `onBind` decides each bind, `refuse` answers dials with 401. */
class ScriptedEdge extends EventEmitter {
  readonly connections: EdgeConnection[] = [];
  refuse = false;
  onBind: (connection: EdgeConnection, bind: Bind) => void = (c, b) => answer(c, b, 'sticky.localhost');
  private readonly server = http.createServer();
  url = '';

  async start(): Promise<this> {
    this.server.on('upgrade', (_req, socket: Socket) => {
      if (this.refuse) {
        socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
        this.emit('refused');
        return;
      }
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${SESSION_UPGRADE}\r\n\r\n`);
      const connection: EdgeConnection = { socket, received: [], mux: undefined as unknown as Mux };
      connection.mux = new Mux(socket, {
        role: 'acceptor',
        onControl: (message) => {
          const m = message as AgentMessage;
          connection.received.push(m);
          this.emit(m.type, connection, m);
          if (m.type === 'bind') this.onBind(connection, m);
        },
      });
      this.connections.push(connection);
      this.emit('connection', connection);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const { socket } of this.connections) socket.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function answer(connection: EdgeConnection, bind: Bind, hostname: string): void {
  const tunnelId = `tun_${bind.requestId}`;
  connection.mux.sendControl({
    type: 'bound',
    requestId: bind.requestId,
    tunnelId,
    hostname,
    url: `https://${hostname}`,
  } satisfies EdgeMessage);
}

/** A tunnel that records what the session tells it, as events. */
class RecordingTunnel extends EventEmitter implements SessionTunnel {
  readonly bindRequest = { local: 'localhost:3000', hostname: 'sticky.localhost' };
  readonly reconnecting: Array<{ attempt: number; delayMs: number; reason: string; planned: boolean }> = [];
  readonly rebound: Bound[] = [];
  handleStream(): void {}
  onReconnecting(attempt: number, delayMs: number, reason: string, planned: boolean): void {
    this.reconnecting.push({ attempt, delayMs, reason, planned });
  }
  onRebound(bound: Bound): void {
    this.rebound.push(bound);
    this.emit('rebound', bound);
  }
  onEnded(error: SvcError): void {
    this.emit('ended', error);
  }
}

describe('AgentSession reconnects', () => {
  const edges: ScriptedEdge[] = [];
  const sessions: AgentSession[] = [];
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((session) => session.close()));
    await Promise.all(edges.splice(0).map((edge) => edge.close()));
  });

  async function connected(): Promise<{ edge: ScriptedEdge; session: AgentSession; tunnel: RecordingTunnel }> {
    const edge = await new ScriptedEdge().start();
    edges.push(edge);
    const session = new AgentSession({ serverUrl: edge.url, token: 'svc_test' });
    sessions.push(session);
    await session.connect();
    const tunnel = new RecordingTunnel();
    await session.bind(tunnel.bindRequest, tunnel);
    return { edge, session, tunnel };
  }

  it('retries a connection lost in the middle of the rebind until the tunnel is back under its hostname', async () => {
    const { edge, tunnel } = await connected();
    let binds = 0;
    edge.onBind = (connection, bind) => {
      binds++;
      if (binds === 1) connection.socket.destroy();
      else answer(connection, bind, 'sticky.localhost');
    };
    edge.connections[0]!.socket.destroy();
    const [bound] = (await once(tunnel, 'rebound')) as [Bound];
    assert.equal(bound.hostname, 'sticky.localhost');
    assert.equal(binds, 2);
    assert.deepEqual(tunnel.rebound.length, 1);
    assert.ok(tunnel.reconnecting.length >= 2, 'the loss during the rebind starts another attempt');
    for (const connection of edge.connections.slice(1)) {
      const sent = connection.received.find((m): m is Bind => m.type === 'bind');
      assert.equal(sent?.hostname, 'sticky.localhost');
    }
  });

  it('a tunnel released while its rebind is in flight gives its new id back at once; the others are rebound', async () => {
    const { edge, session, tunnel } = await connected();
    const other = new RecordingTunnel();
    await session.bind(other.bindRequest, other);
    let releasedAs: string | undefined;
    edge.onBind = (connection, bind) => {
      // The first rebind on the new connection is `tunnel`'s (tunnels rebind in bind order).
      if (releasedAs === undefined) {
        releasedAs = `tun_${bind.requestId}`;
        void session.release(tunnel);
      }
      answer(connection, bind, 'sticky.localhost');
    };
    const unbound = once(edge, 'unbind');
    edge.connections[0]!.socket.destroy();
    await once(other, 'rebound');
    const [, message] = (await unbound) as [EdgeConnection, Extract<AgentMessage, { type: 'unbind' }>];
    assert.equal(message.tunnelId, releasedAs);
    assert.equal(tunnel.rebound.length, 0);
    assert.equal(session.tunnelCount, 1);
  });

  it('a token refused while reconnecting ends the tunnel with the token message and stops', async () => {
    const { edge, session, tunnel } = await connected();
    edge.refuse = true;
    const ended = once(tunnel, 'ended');
    const closed = once(session, 'closed');
    edge.connections[0]!.socket.destroy();
    const [error] = (await ended) as [SvcError];
    await closed;
    assert.equal(error.code, ErrorCode.TOKEN_INVALID);
    assert.equal(error.message, Messages.TOKEN_INVALID);
  });

  it('a connection lost soon after a reconnect does not restart the backoff at the first step', async () => {
    const { edge, tunnel } = await connected();
    edge.connections[0]!.socket.destroy();
    await once(tunnel, 'rebound');
    edge.connections[1]!.socket.destroy();
    await once(tunnel, 'rebound');
    const firsts = tunnel.reconnecting.filter((r) => r.attempt === 1);
    assert.equal(firsts.length, 2);
    // Step 0 waits 125-250 ms, step 1 waits 250-500 ms (equal jitter).
    assert.ok(firsts[0]!.delayMs <= 250 && firsts[1]!.delayMs >= 250, JSON.stringify(firsts));
  });

  it('an edge that announced it is leaving is redialled as a planned restart, from the first backoff step', async () => {
    const { edge, tunnel } = await connected();
    // A loss soon after a reconnect would normally keep climbing the backoff (see above).
    edge.connections[0]!.socket.destroy();
    await once(tunnel, 'rebound');
    const leaving: EdgeMessage = { type: 'leaving', message: 'the edge is restarting' };
    edge.connections[1]!.mux.sendControl(leaving);
    edge.connections[1]!.mux.close('server shutting down');
    await once(tunnel, 'rebound');
    const [lost, restart] = tunnel.reconnecting.filter((r) => r.attempt === 1);
    assert.deepEqual([lost!.planned, restart!.planned], [false, true]);
    assert.equal(restart!.reason, 'the edge is restarting');
    assert.ok(restart!.delayMs <= 250, JSON.stringify(restart));
  });

  it('planned restarts keep dialling at least once a second while the edge stays away', async () => {
    const { edge, tunnel } = await connected();
    edge.connections[0]!.mux.sendControl({ type: 'leaving', message: 'the edge is restarting' } satisfies EdgeMessage);
    edge.connections[0]!.mux.close('server shutting down');
    // An edge still away: each new connection is dropped as soon as it asks for its tunnel.
    let dials = 0;
    edge.onBind = (connection, bind) => {
      if (++dials < 6) connection.socket.destroy();
      else answer(connection, bind, 'sticky.localhost');
    };
    await once(tunnel, 'rebound');
    assert.ok(tunnel.reconnecting.length >= 6, JSON.stringify(tunnel.reconnecting));
    assert.ok(
      tunnel.reconnecting.every((r) => r.delayMs <= 1000),
      JSON.stringify(tunnel.reconnecting),
    );
  });

  it('close() resolves after the edge has read the unbind sent before it', async () => {
    const { edge, session, tunnel } = await connected();
    await session.release(tunnel);
    const connection = edge.connections[0]!;
    assert.ok(connection.received.some((m) => m.type === 'unbind'));
    assert.equal(connection.mux.isClosed, true);
  });
});
