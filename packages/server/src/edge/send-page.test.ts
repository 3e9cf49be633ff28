import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { sendPage } from './proxy.js';

const server = http.createServer((_req, res) => {
  sendPage(res, { status: 302, headers: { location: '/\u65e5' }, body: 'moved\n' });
});
after(() => server.close());

test('a page whose header Node will not write is answered with a plain 500, and the server lives on', async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  for (let i = 0; i < 2; i++) {
    const answer = await fetch(`http://127.0.0.1:${port}/`, { redirect: 'manual' });
    assert.equal(answer.status, 500);
    assert.match(await answer.text(), /could not write this answer/);
  }
});
