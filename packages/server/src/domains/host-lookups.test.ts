import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Store } from '../store/index.js';
import { hostInUse } from './host-lookups.js';

// The ACME gate: a TLS passthrough tunnel's name never gets a certificate ordered, whether it is
// bound here or only listed (its agent away), even on a verified domain.

/** A store stand-in answering one tunnel row and one verified domain. */
function storeWith(tunnel: { proto: 'http' | 'tls' } | undefined): Pick<Store, 'domains' | 'tunnels'> {
  return {
    domains: { byHost: async () => [{ state: 'verified' }] },
    tunnels: { byHostname: async () => tunnel },
  } as unknown as Pick<Store, 'domains' | 'tunnels'>;
}

test('a TLS tunnel row keeps ACME away from its name, a verified domain notwithstanding', async () => {
  assert.equal(await hostInUse(storeWith({ proto: 'tls' }), () => true, 'db.example.com'), false);
  assert.equal(await hostInUse(storeWith({ proto: 'http' }), () => false, 'web.example.com'), true);
  assert.equal(await hostInUse(storeWith(undefined), () => false, 'example.com'), true);
});

test('a TLS tunnel bound on this node keeps ACME away before its row is read', async () => {
  assert.equal(
    await hostInUse(
      storeWith(undefined),
      () => true,
      'db.example.com',
      (host) => host === 'db.example.com',
    ),
    false,
  );
  assert.equal(
    await hostInUse(
      storeWith(undefined),
      () => true,
      'web.example.com',
      (host) => host === 'db.example.com',
    ),
    true,
  );
});
