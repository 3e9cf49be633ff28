import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Inspector } from '@svcrouter/sdk';
import { startInspectorServer } from './server.js';
import type { TunnelControl } from './tunnels-api.js';

test('DELETE /api/tunnels/:name with broken percent-encoding is a 400, not a 500', async () => {
  const removed: string[] = [];
  const control: TunnelControl = {
    list: () => [],
    add: () => Promise.reject(new Error('not used')),
    remove: (name) => {
      removed.push(name);
      return Promise.resolve(undefined);
    },
  };
  const inspector = await startInspectorServer(new Inspector(), '127.0.0.1:0', { current: control });
  try {
    const broken = await fetch(`${inspector.url}/api/tunnels/%E0`, { method: 'DELETE' });
    assert.equal(broken.status, 400);
    assert.deepEqual(await broken.json(), {
      error: 'invalid_request',
      message: 'the tunnel name in the path is not valid percent-encoding',
    });
    const unknown = await fetch(`${inspector.url}/api/tunnels/we%62`, { method: 'DELETE' });
    assert.equal(unknown.status, 404);
    assert.deepEqual(removed, ['web']);
  } finally {
    await inspector.close();
  }
});
