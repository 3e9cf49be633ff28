import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { streamDuplex, tcpHead, type Mux } from '@svcrouter/protocol';
import { selfSignedCertificate } from './origin-test-support.js';
import { TcpProxy, type TcpConnectionLog } from './tcp-proxy.js';
import { proxySession, startEchoService, type EchoService, type ProxySession } from './tcp-proxy-test-support.js';

// A TLS tunnel whose agent terminates TLS (`--tls-cert`): the edge's end of a real session over
// loopback opens a TCP stream, a TLS client speaks through it, and the agent's TcpProxy decrypts
// and relays to a plain echo service. What is judged here is each connection's log line.
describe('TcpProxy terminating TLS', () => {
  const ROUNDS = 30;
  let credentials: { key: Buffer; cert: Buffer } | undefined;
  let service: EchoService;
  let session: ProxySession;
  let edge: Mux;
  const logs: TcpConnectionLog[] = [];
  const logged = new EventEmitter();

  before(async () => {
    credentials = await selfSignedCertificate();
    if (!credentials) return;
    service = await startEchoService();
    const secureContext = tls.createSecureContext(credentials);
    const proxy = new TcpProxy(
      service.target,
      (log) => {
        logs.push(log);
        logged.emit('log');
      },
      { terminate: secureContext },
    );
    session = await proxySession(proxy);
    edge = session.edge;
  });

  after(async () => {
    if (!credentials) return;
    await session.close();
    await service.close();
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
