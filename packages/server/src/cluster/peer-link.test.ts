import assert from 'node:assert/strict';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { pino, type Logger } from 'pino';
import { streamDuplex } from '@svcrouter/protocol';
import { checkDial, dialCredentials, MAX_CLOCK_SKEW_MS, NonceMemory } from './peer-auth.js';
import { PeerLinks } from './peer-links.js';
import { PeerListener } from './peer-listener.js';

/** Bounds a hung test; not a timing assertion. */
const HANG = { timeout: 15_000 };
const SECRET = 'unit-test-cluster-secret-0123';

/** A logger whose JSON lines a test can wait for. */
function capturedLog(): { log: Logger; next(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> } {
  const out = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<{ match: (line: Record<string, unknown>) => boolean; resolve(line: Record<string, unknown>): void }> = [];
  let rest = '';
  out.on('data', (chunk: Buffer) => {
    rest += chunk.toString('utf8');
    let newline;
    while ((newline = rest.indexOf('\n')) >= 0) {
      const line = JSON.parse(rest.slice(0, newline)) as Record<string, unknown>;
      rest = rest.slice(newline + 1);
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (!waiter.match(line)) continue;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  return {
    log: pino({ level: 'info' }, out),
    next: (match) => {
      const seen = lines.find(match);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ match, resolve }));
    },
  };
}

describe('peer link credentials', () => {
  const nonces = new NonceMemory();
  const now = 1_800_000_000_000;

  it('accept the dialer that holds the secret, once', () => {
    const { header } = dialCredentials(SECRET, 'node-b', 'node-a', now);
    const check = checkDial(SECRET, 'node-a', 'node-b', header, nonces, now);
    assert.equal(check.ok, true);
    assert.deepEqual(checkDial(SECRET, 'node-a', 'node-b', header, nonces, now), { ok: false, reason: 'replayed credentials' });
  });

  it('refuse a wrong secret, another target, another sender, stale time and garbage', () => {
    const wrong = dialCredentials('some-other-secret-value', 'node-b', 'node-a', now).header;
    assert.deepEqual(checkDial(SECRET, 'node-a', 'node-b', wrong, nonces, now), { ok: false, reason: 'wrong cluster secret' });
    const forC = dialCredentials(SECRET, 'node-b', 'node-c', now).header;
    assert.deepEqual(checkDial(SECRET, 'node-a', 'node-b', forC, nonces, now), { ok: false, reason: 'wrong cluster secret' });
    const fromB = dialCredentials(SECRET, 'node-b', 'node-a', now).header;
    assert.deepEqual(checkDial(SECRET, 'node-a', 'node-x', fromB, nonces, now), { ok: false, reason: 'wrong cluster secret' });
    const stale = dialCredentials(SECRET, 'node-b', 'node-a', now - MAX_CLOCK_SKEW_MS - 1).header;
    assert.deepEqual(checkDial(SECRET, 'node-a', 'node-b', stale, nonces, now), { ok: false, reason: 'clock skew or stale credentials' });
    assert.deepEqual(checkDial(SECRET, 'node-a', 'node-b', 'v1.x.y', nonces, now), { ok: false, reason: 'no credentials' });
    assert.deepEqual(checkDial(SECRET, 'node-a', undefined, fromB, nonces, now), { ok: false, reason: 'no node id' });
  });
});

describe('peer links over loopback', () => {
  const closers: Array<() => unknown> = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  async function listener(log: Logger): Promise<string> {
    const peer = new PeerListener({
      nodeId: 'node-a',
      secret: SECRET,
      host: '127.0.0.1',
      port: 0,
      heartbeatMs: 1000,
      log,
      // An echo in place of the relay: the head's path back as the reply, the body back as the body.
      onStream: (callbacks) => {
        const stream = streamDuplex(callbacks);
        stream.sendHeaders({ s: 200, h: ['x-path', (stream.meta as { p: string }).p] });
        stream.pipe(stream);
      },
    });
    closers.push(() => peer.close());
    return `http://127.0.0.1:${await peer.listen()}`;
  }

  it('a node holding the secret gets a link whose streams reach the peer', HANG, async () => {
    const captured = capturedLog();
    const url = await listener(captured.log);
    const links = new PeerLinks({ nodeId: 'node-b', secret: SECRET, heartbeatMs: 1000, log: captured.log });
    closers.push(() => links.close());
    links.sync([{ nodeId: 'node-a', url }]);
    await captured.next((line) => line.msg === 'peer link to node opened');
    const session = links.session('node-a');
    assert.ok(session);
    const stream = streamDuplex(session.mux.open({ m: 'POST', p: '/hello', h: [], t: 'tun_x', b: 1 }));
    const [head] = (await once(stream, 'headers')) as [{ s: number; h: string[] }];
    assert.deepEqual(head, { s: 200, h: ['x-path', '/hello'] });
    stream.end('ping');
    let echoed = '';
    for await (const chunk of stream as AsyncIterable<Buffer>) echoed += chunk.toString('utf8');
    assert.equal(echoed, 'ping');
  });

  it('a node with the wrong secret is refused, and gets no link', HANG, async () => {
    const captured = capturedLog();
    const url = await listener(captured.log);
    const links = new PeerLinks({ nodeId: 'node-x', secret: 'the-wrong-secret-for-sure', heartbeatMs: 1000, log: captured.log });
    closers.push(() => links.close());
    links.sync([{ nodeId: 'node-a', url }]);
    const refused = await captured.next((line) => line.msg === 'peer link refused');
    assert.equal(refused.reason, 'wrong cluster secret');
    const down = await captured.next((line) => line.msg === 'peer link to node down');
    assert.match(String(down.reason), /refused the link with 401 \(is SVC_CLUSTER_SECRET the same on every node\?\)/);
    assert.equal(links.session('node-a'), undefined);
  });

  it('the internal listener serves nothing but peer links', HANG, async () => {
    const url = await listener(pino({ level: 'silent' }));
    const res = await fetch(`${url}/v1/tunnels`);
    assert.equal(res.status, 404);
  });
});
