/**
 * Entry of the benchmark's origin process: prints `origin listening on <port>`, then
 * `origin h2 listening on <port>` (the same routes over HTTP/2 with TLS), and runs until SIGTERM.
 */
import { startOrigin } from './origin.js';
import { startH2Origin } from './origin-h2.js';

const origin = await startOrigin(Number(process.argv[2] ?? '0'));
process.stdout.write(`origin listening on ${origin.port}\n`);
const h2 = await startH2Origin();
process.stdout.write(`origin h2 listening on ${h2.port}\n`);
process.once('SIGTERM', () => {
  void Promise.all([origin.close(), h2.close()]).then(() => process.exit(0));
});
