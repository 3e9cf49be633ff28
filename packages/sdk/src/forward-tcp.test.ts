import assert from 'node:assert/strict';
import { it } from 'node:test';
import { checkedTunnelSpec } from './forward.js';

// A TCP tunnel's options are checked before dialling, as the CLI and svc.yml check them.

it('refuses an idle timeout longer than a Node timer can wait, and takes the longest one it can', async () => {
  await assert.rejects(checkedTunnelSpec({ proto: 'tcp', addr: 22, idleTimeoutMs: 1e12 }), {
    code: 'NAME_INVALID',
    message:
      'idle timeout 1000000000000ms is too long: at most 2147483647ms (about 24 days), the longest timer Node keeps; 0 never closes an idle connection',
  });
  assert.ok(await checkedTunnelSpec({ proto: 'tcp', addr: 22, idleTimeoutMs: 2_147_483_647 }));
});
