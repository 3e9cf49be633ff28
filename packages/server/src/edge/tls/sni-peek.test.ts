import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type AddressInfo, type Socket } from 'node:net';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { peekServerName } from './sni-peek.js';

// peekServerName on real loopback sockets: the name and the bytes handed on, a slow or oversized
// ClientHello closed, and garbage closed.

const HANG = { timeout: 15_000 };
const SHORT_MS = 200;

describe('peekServerName', () => {
  let server: net.Server;
  let port: number;
  let accepted: Array<(socket: Socket) => void> = [];
  before(async () => {
    server = net.createServer((socket) => accepted.shift()!(socket));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.close();
    accepted = [];
  });
  const nextSocket = (): Promise<Socket> => new Promise((resolve) => accepted.push(resolve));

  /** A visitor socket and the edge's side of it. */
  async function connect(): Promise<{ visitor: Socket; edge: Socket }> {
    const edge = nextSocket();
    const visitor = net.connect(port, '127.0.0.1');
    visitor.on('error', () => undefined);
    return { visitor, edge: await edge };
  }

  it('hands on the server name and every byte read, paused, with the socket still usable', HANG, async () => {
    const edgeSide = nextSocket();
    const client = tls.connect({ host: '127.0.0.1', port, servername: 'peek.example.com' });
    client.on('error', () => undefined);
    const edge = await edgeSide;
    const [name, head] = await new Promise<[string | undefined, Buffer]>((resolve) =>
      peekServerName(edge, (n, h) => resolve([n, h]), SHORT_MS),
    );
    assert.equal(name, 'peek.example.com');
    assert.equal(head[0], 0x16);
    assert.equal(edge.isPaused(), true);
    // Nothing of the peek listens any more: the bytes after the hello are the caller's.
    assert.equal(edge.listenerCount('data'), 0);
    client.destroy();
    edge.destroy();
  });

  it('closes a ClientHello slower than the timeout', HANG, async () => {
    const { visitor, edge } = await connect();
    let handed = false;
    peekServerName(edge, () => (handed = true), SHORT_MS);
    visitor.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00])); // a record header, then nothing
    await once(edge, 'close');
    assert.equal(handed, false);
    visitor.destroy();
  });

  it('closes a ClientHello that grows past 16 KiB without completing', HANG, async () => {
    const { visitor, edge } = await connect();
    let handed = false;
    peekServerName(edge, () => (handed = true), 10_000);
    // Records of a ClientHello announced at 16,000 bytes, sent in full records: the bytes read pass
    // 16 KiB (record headers included) before the hello completes.
    visitor.write(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x3e, 0x80]));
    const filler = Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x10, 0x00]), Buffer.alloc(4096, 0)]);
    for (let i = 0; i < 5 && !edge.destroyed; i++) visitor.write(filler);
    await once(edge, 'close');
    assert.equal(handed, false);
    visitor.destroy();
  });

  it('closes a connection that does not start with TLS', HANG, async () => {
    const { visitor, edge } = await connect();
    let handed = false;
    peekServerName(edge, () => (handed = true), SHORT_MS * 10);
    visitor.write('GET / HTTP/1.1\r\n\r\n');
    await once(edge, 'close');
    assert.equal(handed, false);
    visitor.destroy();
  });
});
