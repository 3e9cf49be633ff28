/**
 * Entry of the TCP rows' local service (tcp-origin.ts), a process of its own as the HTTP origin
 * is: prints `tcp origin listening on <port>` and runs until SIGTERM.
 */
import { startTcpOrigin } from './tcp-origin.js';

const origin = await startTcpOrigin(Number(process.argv[2] ?? '0'));
process.stdout.write(`tcp origin listening on ${origin.port}\n`);
process.once('SIGTERM', () => {
  void origin.close().then(() => process.exit(0));
});
