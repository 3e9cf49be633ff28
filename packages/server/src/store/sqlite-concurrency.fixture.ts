// Child process for sqlite.test.ts: opens the store in the data dir given as
// argv[2] and creates the account argv[3], as `svc-server account create`
// would while the server holds the same file open. It prints "ready" once
// loaded and waits for a line on stdin, so the parent can release several
// children at the same instant.
import { once } from 'node:events';
import { openStore } from './open-store.js';

const [dataDir, email] = process.argv.slice(2);
if (dataDir === undefined || email === undefined) throw new Error('usage: fixture <dataDir> <email>');
process.stdout.write('ready\n');
await once(process.stdin, 'data');
process.stdin.destroy();
const store = await openStore({ dataDir });
try {
  await store.accounts.create({ email, name: 'child', plan: 'free' });
} finally {
  await store.close();
}
