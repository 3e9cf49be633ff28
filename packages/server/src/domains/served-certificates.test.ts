import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore, type Account, type Store } from '../store/index.js';
import { ServedCertificates } from './served-certificates.js';

// The one loop that forgets a removed domain's certificates, against a real SQLite store.

describe('ServedCertificates.forgetUnder', () => {
  let dir: string;
  let store: Store;
  let account: Account;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-served-'));
    store = await openStore({ dataDir: dir });
    account = await store.accounts.create({ email: 'a@example.com', name: 'A', plan: 'pro' });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function verified(host: string) {
    const domain = await store.domains.create({ accountId: account.id, host, txtValue: 'svc-verify-x' });
    return (await store.domains.markVerified(domain.id))!;
  }

  it('drops the names at or under the removed domain that no verified domain still covers', async () => {
    const removed = await verified('app.example.com');
    await verified('keep.app.example.com');
    const dropped: string[] = [];
    const served = new ServedCertificates({ domains: store.domains, forget: (name) => dropped.push(name) });
    for (const host of ['app.example.com', 'x.app.example.com', 'api.keep.app.example.com', 'other.example.org']) served.add(host);
    assert.equal((await store.domains.delete(account.id, removed.id))?.host, 'app.example.com');

    const forgotten = await served.forgetUnder('app.example.com', ['row.app.example.com', 'row.example.org']);

    assert.deepEqual(forgotten.sort(), ['app.example.com', 'row.app.example.com', 'x.app.example.com']);
    assert.deepEqual(dropped.sort(), forgotten);
    // What was forgotten is no longer served; a second removal of the same name finds only the host.
    dropped.length = 0;
    assert.deepEqual(await served.forgetUnder('app.example.com'), ['app.example.com']);
    assert.deepEqual(await served.forgetUnder('keep.app.example.com'), []);
  });
});
