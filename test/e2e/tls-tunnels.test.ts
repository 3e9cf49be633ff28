import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { forward, type TcpConnectionLog, type Tunnel } from '@svcrouter/sdk';
import { recordArrives } from './harness/api-helpers.js';
import { startServer, type TestServer } from './harness/index.js';
import { connectTcp, readAll } from './harness/tcp-support.js';
import {
  answerHttp,
  curlHttps,
  dialTls,
  opensslClient,
  selfSignedCertificate,
  startTlsService,
  type LocalCertificate,
} from './harness/tls-support.js';

// TLS passthrough through a real server process: the edge routes by the ClientHello's SNI on its
// HTTPS port, and the visitor verifies the LOCAL service's own certificate (openssl s_client,
// curl), while an HTTP tunnel on the same edge keeps the edge's certificate.

describe('tls tunnels', () => {
  let server: TestServer;
  let cert: LocalCertificate;
  let service: Awaited<ReturnType<typeof startTlsService>>;
  let tunnel: Tunnel;
  let poolCert: LocalCertificate | undefined;
  const host = 'secure.localhost';

  before(async () => {
    server = await startServer();
    cert = await selfSignedCertificate(host);
    poolCert = await selfSignedCertificate('pooled.localhost');
    service = await startTlsService(cert, (socket) => answerHttp(socket, `hello from the local TLS service (${socket.servername})`));
    // forward() resolves once the tunnel is live: the edge routes its SNI from then on.
    tunnel = await forward({ proto: 'tls', addr: service.port, subdomain: 'secure', token: server.token!, serverUrl: server.url });
  });
  after(async () => {
    await tunnel?.close();
    await service?.close();
    await cert?.close();
    await poolCert?.close();
    await server?.close();
  });

  it('prints a tls:// address with the HTTPS port', () => {
    assert.equal(tunnel.url, `tls://${host}:${server.httpsPort}`);
  });

  it('curl verifies the local service certificate through the edge', async () => {
    const result = await curlHttps(host, server.httpsPort, cert.certPath);
    assert.ok(result.ok, result.stderr);
    assert.equal(result.stdout, `hello from the local TLS service (${host})`);
  });

  it('openssl s_client -servername reaches the local service and verifies its certificate', async () => {
    const { code, stdout } = await opensslClient(host, server.httpsPort, cert.certPath, 'GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    assert.equal(code, 0, stdout);
    assert.match(stdout, /Verify return code: 0 \(ok\)/);
    assert.match(stdout, /hello from the local TLS service/);
    assert.match(stdout, /subject=CN ?= ?secure\.localhost/);
  });

  it('an HTTP tunnel on the same edge is still served with the edge certificate', async () => {
    const origin = http.createServer((_req, res) => res.end('plain origin'));
    origin.listen(0, '127.0.0.1');
    await once(origin, 'listening');
    const web = await forward({
      addr: (origin.address() as AddressInfo).port,
      subdomain: 'web',
      token: server.token!,
      serverUrl: server.url,
    });
    try {
      const viaEdge = await curlHttps('web.localhost', server.httpsPort, server.caPath);
      assert.ok(viaEdge.ok, viaEdge.stderr);
      assert.equal(viaEdge.stdout, 'plain origin');
      // The TLS tunnel's name is not the edge's to serve: the edge's CA does not verify it.
      const wrongCa = await curlHttps(host, server.httpsPort, server.caPath);
      assert.equal(wrongCa.ok, false);
    } finally {
      await web.close();
      origin.close();
    }
  });

  it('records each connection in the inspector and reports it to the agent', async () => {
    const logged = once(tunnel, 'connection') as Promise<[TcpConnectionLog]>;
    const socket = await dialTls(server.httpsPort, host, cert.certPem);
    const got = readAll(socket);
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    assert.match((await got).toString(), /hello from the local TLS service/);
    // A clean close, read to the last byte: destroy() here resets the connection whenever bytes
    // are still on their way, and the record then says 499 (the visitor reset it), rightly.
    socket.end();
    await once(socket, 'close');
    const [log] = await logged;
    assert.ok(log.bytesIn > 0 && log.bytesOut > 0);
    const record = await recordArrives(server, server.token!, { host, method: 'TLS' });
    assert.equal(record.method, 'TLS');
    assert.equal(record.proto, 'tls');
    assert.equal(record.path, '');
    assert.equal(record.status, 200);
    assert.equal(record.ip, '127.0.0.1');
    assert.ok(record.bytes > 0);
  });

  it('closes a ClientHello larger than 16 KiB', async () => {
    const socket = await connectTcp(server.httpsPort);
    socket.on('error', () => undefined);
    // A handshake record announcing a 20,000-byte ClientHello, then more bytes than the edge reads.
    const header = Buffer.from([0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x00, 0x4e, 0x20]);
    socket.write(Buffer.concat([header, Buffer.alloc(17_000, 1)]));
    // The edge closes without a byte (neither the local service nor the edge's TLS answers): a FIN,
    // or a reset when it closed before reading all that was sent.
    let received = 0;
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    await new Promise((resolve) => {
      socket.once('end', resolve);
      socket.once('close', resolve);
    });
    assert.equal(received, 0);
    socket.destroy();
  });

  it('closes a ClientHello slower than 10 s', { timeout: 30_000 }, async () => {
    const socket = await connectTcp(server.httpsPort);
    socket.on('error', () => undefined);
    const started = performance.now();
    socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])); // a record and handshake start, then silence
    await new Promise((resolve) => {
      socket.once('end', resolve);
      socket.once('close', resolve);
    });
    const waited = performance.now() - started;
    assert.ok(waited >= 9_500 && waited < 20_000, `closed after ${Math.round(waited)} ms`);
    socket.destroy();
  });

  it('a pool of two agents: connections go to both members', async () => {
    const answers = await Promise.all(
      ['one', 'two'].map((member) => startTlsService(poolCert!, (socket) => answerHttp(socket, `member ${member}`))),
    );
    const members = [];
    try {
      for (const service of answers) {
        members.push(
          await forward({ proto: 'tls', addr: service.port, subdomain: 'pooled', pool: true, token: server.token!, serverUrl: server.url }),
        );
      }
      const seen = new Set<string>();
      for (let i = 0; i < 4; i++) {
        const result = await curlHttps('pooled.localhost', server.httpsPort, poolCert!.certPath);
        assert.ok(result.ok, result.stderr);
        seen.add(result.stdout);
      }
      assert.deepEqual([...seen].sort(), ['member one', 'member two']);
    } finally {
      for (const member of members) await member.close();
      for (const service of answers) await service.close();
    }
  });

  it('lists the tunnel as proto tls with its address', async () => {
    const response = await fetch(`${server.url}/v1/tunnels`, { headers: { authorization: `Bearer ${server.token!}` } });
    const body = (await response.json()) as { tunnels: Array<{ proto: string; url: string; host: string }> };
    const listed = body.tunnels.find((t) => t.host === host);
    assert.equal(listed?.proto, 'tls');
    assert.equal(listed?.url, `tls://${host}:${server.httpsPort}`);
  });
});
