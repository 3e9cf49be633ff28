import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import type net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { tempDir } from './index.js';

const run = promisify(execFile);

/** A TLS proxy in front of the edge that answers every HTTP/1.1 Upgrade with 403, as some load balancers do. */
export interface UpgradeCuttingProxy {
  port: number;
  /** Upgrades refused so far. */
  refused: number;
  /** Where to forward, once the edge behind it listens, trusting its dev CA. */
  forwardTo(edgePort: number, caPem: string): void;
  close(): Promise<void>;
}

/**
 * Starts the proxy on a free loopback port. It terminates TLS with a certificate per SNI name,
 * signed by the server's dev CA (`caDir` holds ca.crt and ca.key) with openssl, so the doctor
 * trusts it as it trusts the edge; HTTP/2 connections (ALPN h2) pass through untouched, and an
 * HTTP/1.1 connection whose first request asks for an Upgrade gets 403.
 */
export async function startUpgradeCuttingProxy(caDir: () => string): Promise<UpgradeCuttingProxy> {
  const work = await tempDir('svc-doctor-proxy-');
  const contexts = new Map<string, Promise<tls.SecureContext>>();
  let edgePort = 0;
  let edgeCa = '';
  const open = new Set<net.Socket>();
  const mint = async (name: string): Promise<tls.SecureContext> => {
    const base = path.join(work.dir, name);
    await writeFile(`${base}.ext`, `subjectAltName=DNS:${name}\n`);
    await run(
      'openssl',
      ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
        '-keyout',
        `${base}.key`,
        '-subj',
        `/CN=${name}`,
        '-out',
        `${base}.csr`,
      ]),
    );
    await run(
      'openssl',
      ['x509', '-req', '-in', `${base}.csr`, '-CA', path.join(caDir(), 'ca.crt'), '-CAkey', path.join(caDir(), 'ca.key')].concat([
        '-CAcreateserial',
        '-CAserial',
        `${base}.srl`,
        '-days',
        '2',
        '-extfile',
        `${base}.ext`,
        '-out',
        `${base}.crt`,
      ]),
    );
    return tls.createSecureContext({ key: await readFile(`${base}.key`), cert: await readFile(`${base}.crt`) });
  };
  const proxy = {
    port: 0,
    refused: 0,
    forwardTo: (port: number, caPem: string) => {
      edgePort = port;
      edgeCa = caPem;
    },
    close: async () => undefined,
  } satisfies UpgradeCuttingProxy;
  const server = tls.createServer({
    ALPNProtocols: ['h2', 'http/1.1'],
    SNICallback: (name, callback) => {
      if (!contexts.has(name)) contexts.set(name, mint(name));
      contexts.get(name)!.then(
        (context) => callback(null, context),
        (error: Error) => callback(error),
      );
    },
  });
  server.on('connection', (socket: net.Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  server.on('secureConnection', (visitor: tls.TLSSocket) => {
    const name = visitor.servername || 'localhost';
    const connectUpstream = (): tls.TLSSocket => {
      const upstream = tls.connect({
        host: '127.0.0.1',
        port: edgePort,
        servername: name,
        ca: edgeCa,
        ALPNProtocols: [visitor.alpnProtocol || 'http/1.1'],
      });
      upstream.on('error', () => visitor.destroy());
      visitor.on('error', () => upstream.destroy());
      visitor.on('close', () => upstream.destroy());
      return upstream;
    };
    if (visitor.alpnProtocol === 'h2') return void visitor.pipe(connectUpstream()).pipe(visitor);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      visitor.off('data', onData);
      if (/^upgrade:/im.test(head.subarray(0, end).toString('latin1'))) {
        proxy.refused++;
        visitor.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
        return;
      }
      const upstream = connectUpstream();
      upstream.write(head);
      visitor.pipe(upstream).pipe(visitor);
    };
    visitor.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as net.AddressInfo).port;
  proxy.close = async () => {
    for (const socket of open) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await work.remove();
  };
  return proxy;
}
