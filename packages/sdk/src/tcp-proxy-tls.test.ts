import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { Mux, streamDuplex, tcpHead } from '@svcrouter/protocol';
import { selfSignedCertificate } from './origin-test-support.js';
import { TcpProxy, type TcpConnectionLog } from './tcp-proxy.js';

// A TLS tunnel whose agent terminates TLS (`--tls-cert`): the edge's end of a real session over
// loopback opens a TCP stream, a TLS client speaks through it, and the agent's TcpProxy decrypts
// and relays to a plain echo service. What is judged here is each connection's log line.
describe('TcpProxy terminating TLS', () => {
  const ROUNDS = 30;
  let credentials: { key: Buffer; cert: Buffer } | undefined;
  let service: net.Server;
  let listener: net.Server;
  let edge: Mux;
  let sockets: net.Socket[];
  let proxy: TcpProxy;
  const logs: TcpConnectionLog[] = [];
  const logged = new EventEmitter();

  before(async () => {
    credentials = await selfSignedCertificate();
    if (!credentials) return;
    // Echoes, and ends its side once the client ended its own.
    service = net.createServer({ allowHalfOpen: true }, (socket) => {
      socket.on('error', () => undefined);
      socket.pipe(socket);
    });
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    const { port } = service.address() as net.AddressInfo;
    const secureContext = tls.createSecureContext(credentials);
    proxy = new TcpProxy(
      { host: '127.0.0.1', port, hostPort: `127.0.0.1:${port}` },
      (log) => {
        logs.push(log);
        logged.emit('log');
      },
      { terminate: secureContext },
    );
    listener = net.createServer();
    listener.listen(0, '127.0.0.1');
    await once(listener, 'listening');
    const accepted = once(listener, 'connection') as Promise<[net.Socket]>;
    const dialerSocket = net.connect((listener.address() as net.AddressInfo).port, '127.0.0.1');
    const [[acceptorSocket]] = await Promise.all([accepted, once(dialerSocket, 'connect')]);
    sockets = [dialerSocket, acceptorSocket];
    new Mux(dialerSocket, { role: 'dialer', onStream: (stream) => proxy.handle(stream) });
    edge = new Mux(acceptorSocket, { role: 'acceptor' });
  });

  after(async () => {
    if (!credentials) return;
    await proxy.close();
    edge.destroy();
    for (const socket of sockets) socket.destroy();
    await Promise.all([listener, service].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  });

  const nextLog = async (taken: number): Promise<TcpConnectionLog> => {
    while (logs.length <= taken) await once(logged, 'log');
    return logs[taken]!;
  };

  /** A TLS client over a new TCP stream of the session, as the edge hands a visitor's bytes on. */
  const visitor = (): tls.TLSSocket => {
    const stream = streamDuplex(edge.open(tcpHead('tun_tls', '203.0.113.7:40000', 443), undefined, false));
    stream.on('error', () => undefined);
    return tls.connect({ socket: stream, servername: 'localhost', ca: credentials!.cert });
  };

  it('logs a connection both ends closed cleanly as closed, with its bytes, every time', async (t) => {
    if (!credentials) {
      if (process.env.CI === 'true') assert.fail('openssl is missing; CI must test the agent terminating TLS');
      return t.skip('openssl is not installed');
    }
    for (let round = 0; round < ROUNDS; round++) {
      const taken = logs.length;
      const client = visitor();
      await once(client, 'secureConnect');
      client.write(`hello ${round}`);
      const [echo] = (await once(client, 'data')) as [Buffer];
      assert.equal(echo.toString(), `hello ${round}`);
      // close_notify and the end of the stream; the service ends its side, and so does the agent.
      client.end();
      await once(client, 'close');
      const log = await nextLog(taken);
      assert.equal(log.outcome, 'closed', `round ${round}: ${JSON.stringify(log)}`);
      assert.equal(log.visitor, '203.0.113.7:40000');
      // Plain bytes, what the service took and gave, not the TLS records around them.
      assert.equal(log.bytesIn, `hello ${round}`.length, JSON.stringify(log));
      assert.equal(log.bytesOut, `hello ${round}`.length, JSON.stringify(log));
      assert.equal(log.detail, undefined);
    }
  });

  it('logs a visitor that sends no TLS as reset, naming the TLS failure', async (t) => {
    if (!credentials) return t.skip('openssl is not installed');
    const taken = logs.length;
    const stream = streamDuplex(edge.open(tcpHead('tun_tls', '203.0.113.8:40001', 443), undefined, false));
    stream.on('error', () => undefined);
    stream.end('GET / HTTP/1.1\r\nHost: plain.example\r\n\r\n');
    const log = await nextLog(taken);
    assert.equal(log.outcome, 'reset', JSON.stringify(log));
    assert.match(String(log.detail), /^TLS: /);
  });
});
