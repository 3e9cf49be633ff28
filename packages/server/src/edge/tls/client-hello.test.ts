import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { describe, it } from 'node:test';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello } from './client-hello.js';

// The SNI reader against real ClientHellos, captured at test time from Node's TLS client and the
// openssl command line, then against every truncation, re-framing and garbage.

/** The first bytes a client sends to a loopback listener (its ClientHello), then the client is cut. */
async function capture(dial: (port: number) => () => void): Promise<Buffer> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  try {
    const accepted = once(server, 'connection') as Promise<[net.Socket]>;
    const stop = dial(port);
    const [socket] = await accepted;
    const chunks: Buffer[] = [];
    for (;;) {
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      chunks.push(chunk);
      if (parseClientHello(Buffer.concat(chunks)).kind !== 'more') break;
    }
    socket.destroy();
    stop();
    return Buffer.concat(chunks);
  } finally {
    server.close();
  }
}

function nodeHello(servername: string | undefined): Promise<Buffer> {
  return capture((port) => {
    const client = tls.connect({ host: '127.0.0.1', port, ...(servername === undefined ? {} : { servername }) });
    client.on('error', () => undefined);
    return () => client.destroy();
  });
}

function opensslHello(servername: string): Promise<Buffer> {
  return capture((port) => {
    const child = execFile(
      'openssl',
      ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', servername],
      { timeout: 10_000 },
      () => undefined,
    );
    child.stdin?.end();
    return () => child.kill();
  });
}

/** The same ClientHello split across two handshake records, as a client may send it. */
function reframed(hello: Buffer, at: number): Buffer {
  const body = hello.subarray(5, 5 + hello.readUInt16BE(3));
  const record = (part: Buffer): Buffer => Buffer.concat([Buffer.from([0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff]), part]);
  return Buffer.concat([record(body.subarray(0, at)), record(body.subarray(at))]);
}

describe('parseClientHello', () => {
  it("reads the server name of Node's ClientHello", async () => {
    assert.deepEqual(parseClientHello(await nodeHello('App.Example.COM')), { kind: 'hello', serverName: 'app.example.com' });
  });

  it("reads the server name of openssl s_client's ClientHello", async () => {
    assert.deepEqual(parseClientHello(await opensslHello('secure.localhost')), { kind: 'hello', serverName: 'secure.localhost' });
  });

  it('answers no server name for a ClientHello without SNI (a client dialling an IP)', async () => {
    assert.deepEqual(parseClientHello(await nodeHello(undefined)), { kind: 'hello', serverName: undefined });
  });

  it('asks for more at every truncation of a real ClientHello, and never throws', async () => {
    const hello = await nodeHello('cut.example.com');
    for (let length = 0; length < hello.length; length++)
      assert.deepEqual(parseClientHello(hello.subarray(0, length)), { kind: 'more' }, `at ${length}`);
  });

  it('reads a ClientHello split across two records, at every split point', async () => {
    const hello = await opensslHello('split.example.com');
    const bodyLength = hello.readUInt16BE(3);
    for (let at = 1; at < bodyLength; at += 7) {
      assert.deepEqual(parseClientHello(reframed(hello, at)), { kind: 'hello', serverName: 'split.example.com' }, `split at ${at}`);
    }
  });

  it('ignores bytes after the ClientHello', async () => {
    const hello = await nodeHello('more.example.com');
    assert.deepEqual(parseClientHello(Buffer.concat([hello, Buffer.from('trailing garbage')])), {
      kind: 'hello',
      serverName: 'more.example.com',
    });
  });

  it('refuses what is not a TLS ClientHello', () => {
    assert.equal(parseClientHello(Buffer.from('GET / HTTP/1.1\r\n')).kind, 'invalid');
    assert.equal(parseClientHello(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x02, 0, 0, 1, 0])).kind, 'invalid'); // a ServerHello
    assert.equal(parseClientHello(Buffer.from([0x16, 0x02, 0x00, 0x00, 0x05])).kind, 'invalid'); // SSL 2 era version
    assert.equal(parseClientHello(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x00])).kind, 'invalid'); // an empty record
  });

  it('refuses a ClientHello announced larger than 16 KiB before it arrives', () => {
    const length = MAX_CLIENT_HELLO_BYTES + 1;
    const head = Buffer.from([0x16, 0x03, 0x01, 0x40, 0x00, 0x01, length >> 16, (length >> 8) & 0xff, length & 0xff]);
    assert.deepEqual(parseClientHello(head), { kind: 'invalid', reason: 'ClientHello too large' });
  });

  it('refuses lengths that overrun their structure, and two server_name extensions', async () => {
    const hello = await nodeHello('twice.example.com');
    // The server_name extension (type 0) of the real hello, found and then duplicated.
    const at = findExtension(hello, 0);
    assert.ok(at > 0);
    const extension = hello.subarray(at, at + 4 + hello.readUInt16BE(at + 2));
    const twice = withExtraExtension(hello, extension);
    assert.deepEqual(parseClientHello(twice), { kind: 'invalid', reason: 'two server_name extensions' });
    const overrun = Buffer.from(hello);
    overrun.writeUInt16BE(0xffff, at + 2); // the extension claims more bytes than the hello has
    assert.equal(parseClientHello(overrun).kind, 'invalid');
  });

  it('never throws on random bytes after a handshake record header', () => {
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
    for (let round = 0; round < 2000; round++) {
      const length = 4 + (round % 300);
      const body = Buffer.alloc(length, 0).map(() => random());
      body[0] = 0x01;
      const record = Buffer.concat([Buffer.from([0x16, 0x03, 0x01, length >> 8, length & 0xff]), body]);
      const result = parseClientHello(record);
      assert.ok(['more', 'invalid', 'hello'].includes(result.kind));
    }
  });
});

/** Offset of extension `type` in a single-record ClientHello, or -1. */
function findExtension(hello: Buffer, type: number): number {
  let at = 5 + 4 + 34;
  at += 1 + hello[at]!;
  at += 2 + hello.readUInt16BE(at);
  at += 1 + hello[at]!;
  const end = at + 2 + hello.readUInt16BE(at);
  at += 2;
  while (at < end) {
    if (hello.readUInt16BE(at) === type) return at;
    at += 4 + hello.readUInt16BE(at + 2);
  }
  return -1;
}

/** The single-record ClientHello with `extension` appended, every enclosing length grown to match. */
function withExtraExtension(hello: Buffer, extension: Buffer): Buffer {
  const out = Buffer.concat([hello.subarray(0, 5 + hello.readUInt16BE(3)), extension]);
  const grow = extension.length;
  out.writeUInt16BE(out.readUInt16BE(3) + grow, 3);
  const handshake = (out[6]! << 16) | (out[7]! << 8) | out[8]!;
  out.writeUIntBE(handshake + grow, 6, 3);
  let at = 5 + 4 + 34;
  at += 1 + out[at]!;
  at += 2 + out.readUInt16BE(at);
  at += 1 + out[at]!;
  out.writeUInt16BE(out.readUInt16BE(at) + grow, at);
  return out;
}
