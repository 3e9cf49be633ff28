import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import { Inspector } from '@svcrouter/sdk';
import { parseInspectAddr, startInspectorServer } from './server.js';

test('a taken port moves the inspector to the next free one, and the printed URL says which', async () => {
  const busy = net.createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const taken = (busy.address() as net.AddressInfo).port;
  const inspector = await startInspectorServer(new Inspector(), `127.0.0.1:${taken}`);
  try {
    assert.notEqual(inspector.port, taken);
    assert.equal(inspector.url, `http://127.0.0.1:${inspector.port}`);
    const response = await fetch(`${inspector.url}/api/requests`);
    assert.deepEqual(await response.json(), { requests: [] });
  } finally {
    await inspector.close();
    busy.close();
  }
});

/** Occupies `count` consecutive loopback ports and returns the first; retries other bases. */
async function occupyRun(count: number): Promise<{ first: number; close(): void }> {
  for (;;) {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const first = (probe.address() as net.AddressInfo).port;
    const servers = [probe];
    while (servers.length < count && first + servers.length <= 65535) {
      const next = net.createServer();
      const bound = await new Promise<boolean>((resolve) => {
        next.once('error', () => resolve(false));
        next.listen(first + servers.length, '127.0.0.1', () => resolve(true));
      });
      if (!bound) break;
      servers.push(next);
    }
    const close = (): void => servers.forEach((server) => server.close());
    if (servers.length === count) return { first, close };
    close();
  }
}

test('a run of taken ports leaves no listener behind on the inspector server (no MaxListeners warning)', async () => {
  const run = await occupyRun(12);
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  process.on('warning', onWarning);
  const inspector = await startInspectorServer(new Inspector(), `127.0.0.1:${run.first}`);
  try {
    assert.ok(inspector.port < run.first || inspector.port >= run.first + 12, `${inspector.port} is one of the taken ports`);
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      warnings.map((warning) => warning.name),
      [],
    );
  } finally {
    process.off('warning', onWarning);
    await inspector.close();
    run.close();
  }
});

test('addresses: host:port and [v6]:port parse; anything else, or a network address, is refused', async () => {
  assert.deepEqual(parseInspectAddr('127.0.0.1:4040'), { host: '127.0.0.1', port: 4040 });
  assert.deepEqual(parseInspectAddr('[::1]:4041'), { host: '::1', port: 4041 });
  assert.equal(parseInspectAddr('4040'), undefined);
  assert.equal(parseInspectAddr('127.0.0.1:70000'), undefined);
  await assert.rejects(startInspectorServer(new Inspector(), '192.168.1.2:4040'), /must be a loopback address/);
  await assert.rejects(startInspectorServer(new Inspector(), 'nonsense'), /expected host:port/);
});

test('an inspector on another loopback address (127.0.0.2) answers at the URL it prints, and still refuses a foreign Host', async () => {
  const inspector = await startInspectorServer(new Inspector(), '127.0.0.2:0');
  try {
    assert.equal(inspector.url, `http://127.0.0.2:${inspector.port}`);
    const response = await fetch(`${inspector.url}/api/requests`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { requests: [] });
    const replay = await fetch(`${inspector.url}/api/requests/req_1/replay`, {
      method: 'POST',
      headers: { origin: inspector.url },
    });
    assert.equal(replay.status, 404, 'the UI at this address may replay: only the unknown id is refused');
    const rebound = await new Promise<number>((resolve, reject) => {
      const request = http.get({
        host: '127.0.0.2',
        port: inspector.port,
        path: '/api/requests',
        headers: { host: `attacker.example:${inspector.port}` },
      });
      request.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      request.on('error', reject);
    });
    assert.equal(rebound, 403);
  } finally {
    await inspector.close();
  }
});
