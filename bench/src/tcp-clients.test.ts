import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DeadlineError, tcpConnections, tcpDownload, tcpEcho, tcpUpload } from './tcp-clients.js';
import { startTcpOrigin, type TcpOrigin } from './tcp-origin.js';
import { parseByteSize } from './options.js';
import { figure, rotatingRounds } from './w-tcp.js';

const MINUTE = { label: 'test run', ms: 60_000 };

describe('the TCP rows clients against the TCP service', () => {
  let origin: TcpOrigin;
  before(async () => {
    origin = await startTcpOrigin();
  });
  after(() => origin.close());

  it('downloads and uploads the bytes asked for, and the service counts an upload exactly', async () => {
    for (const bytes of [1, 300_000, 3 * 1024 * 1024 + 7]) {
      assert.ok((await tcpDownload(origin.port, bytes, MINUTE)) > 0);
      assert.ok((await tcpUpload(origin.port, bytes, MINUTE)) > 0);
    }
  });

  it('opens, echoes one byte on and closes every connection asked for', async () => {
    const perS = await tcpConnections(origin.port, 40, 8, MINUTE);
    assert.ok(Number.isFinite(perS) && perS > 0, String(perS));
  });

  it('times one-byte round trips on one connection', async () => {
    const { median, p99 } = await tcpEcho(origin.port, 30, 3, MINUTE);
    assert.ok(median > 0 && p99 >= median, `${median} ${p99}`);
  });
});

describe('a TCP run that stalls', () => {
  // A service that accepts and never answers: every client must fail by its deadline, named.
  const held = new Set<Socket>();
  const silent = net.createServer((socket) => {
    held.add(socket);
    socket.on('error', () => undefined);
  });
  before(async () => {
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
  });
  after(async () => {
    for (const socket of held) socket.destroy();
    silent.close();
    await once(silent, 'close');
  });
  const port = (): number => (silent.address() as net.AddressInfo).port;

  it('fails with the run named and how far it got, instead of hanging', async () => {
    await assert.rejects(tcpDownload(port(), 1024, { label: 'TCP download through svc tcp', ms: 200 }), (error: Error) => {
      assert.ok(error instanceof DeadlineError);
      assert.equal(error.message, 'TCP download through svc tcp did not finish within 0.2 s (0 B of 1024 B received)');
      return true;
    });
    await assert.rejects(tcpConnections(port(), 5, 2, { label: 'TCP connections through ssh -L', ms: 200 }), {
      name: 'DeadlineError',
      message: 'TCP connections through ssh -L did not finish within 0.2 s (0 of 5 connections done)',
    });
    await assert.rejects(tcpEcho(port(), 5, 0, { label: 'TCP echo direct', ms: 200 }), {
      name: 'DeadlineError',
      message: 'TCP echo direct did not finish within 0.2 s (0 of 5 round trips done)',
    });
    // The upload's service never answers its count: the bytes went out, the run still fails.
    await assert.rejects(tcpUpload(port(), 1024, { label: 'TCP upload direct', ms: 200 }), {
      name: 'DeadlineError',
      message: 'TCP upload direct did not finish within 0.2 s (1024 B of 1024 B sent)',
    });
  });
});

describe('the TCP rows figures', () => {
  it('rotate the order of the sides each round and take medians of each side and of the per-round ratios', async () => {
    const order: string[] = [];
    const values = { direct: [100, 120, 110], tunnel: [80, 60, 99], ssh: [40, 50, 45] };
    const rounds = await rotatingRounds(3, ['direct', 'tunnel', 'ssh'], async (side) => {
      order.push(side);
      return values[side][order.filter((s) => s === side).length - 1]!;
    });
    assert.deepEqual(order, ['direct', 'tunnel', 'ssh', 'tunnel', 'ssh', 'direct', 'ssh', 'direct', 'tunnel']);
    const f = figure(rounds, (v) => v);
    assert.deepEqual([f.direct, f.tunnel, f.ssh], [110, 80, 45]);
    assert.equal(f.ratio, 0.8); // per round 0.8, 0.5, 0.9
    assert.equal(f.sshRatio, 2); // per round 2, 1.2, 2.2
  });

  it('have no ssh figure when ssh did not run', async () => {
    const rounds = await rotatingRounds(1, ['direct', 'tunnel'], async (side) => (side === 'direct' ? 10 : 5));
    const f = figure(rounds, (v) => v);
    assert.equal(f.ssh, null);
    assert.equal(f.sshRatio, null);
    assert.equal(f.ratio, 0.5);
  });

  it('--tcp-bytes reads plain bytes and KiB, MiB, GiB, and refuses anything else', () => {
    assert.equal(parseByteSize('256MiB'), 256 * 1024 * 1024);
    assert.equal(parseByteSize('1GiB'), 1024 ** 3);
    assert.equal(parseByteSize('1g'), 1024 ** 3);
    assert.equal(parseByteSize('64K'), 65_536);
    assert.equal(parseByteSize('1000'), 1000);
    for (const bad of ['0', '', 'x', '1TiB', '-5', '65GiB']) {
      assert.throws(() => parseByteSize(bad), /--tcp-bytes takes a size from 1 byte to 64GiB/, bad);
    }
  });
});
