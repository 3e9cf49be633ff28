/** Entry of the benchmark's origin process: prints `origin listening on <port>` and runs until SIGTERM. */
import { startOrigin } from './origin.js';

const origin = await startOrigin(Number(process.argv[2] ?? '0'));
process.stdout.write(`origin listening on ${origin.port}\n`);
process.once('SIGTERM', () => {
  void origin.close().then(() => process.exit(0));
});
