import { createAccountWithToken } from '../auth/index.js';
import type { ServerConfig } from '../config.js';
import type { DevCa } from '../certs/index.js';
import { StoreConflictError, type Store } from '../store/index.js';
import { apexHttpUrl, printSignInLink } from './sign-in-link-text.js';

/** Email of the account created on the first start of an empty store. */
export const LOCAL_ACCOUNT_EMAIL = 'local@svcrouter.localhost';

/** What the welcome text reads of a running server (server.ts's RunningServer has it all). */
export interface WelcomeServer {
  httpPort: number;
  httpsPort: number;
  devCa: DevCa | undefined;
  store: Store;
  publicUrl(hostname: string): string;
  /** Set when this node is one of several sharing PostgreSQL. */
  cluster?: { nodeUrl: string } | undefined;
}

/**
 * Prints where the server listens and, on the first start with an empty store, creates a
 * local account and prints its token once with the exact command to run, and a one-time
 * link that sets its dashboard password.
 */
export async function printWelcome(server: WelcomeServer, config: ServerConfig, out: NodeJS.WritableStream): Promise<void> {
  const apexHttp = apexHttpUrl(config.sharedDomain, server.httpPort);
  const apexHttps = server.publicUrl(config.sharedDomain);
  out.write(`svcRouter edge is up\n`);
  out.write(`  dashboard  ${apexHttp}/\n`);
  out.write(`  REST API   ${apexHttp}/v1   (also ${apexHttps}/v1)\n`);
  out.write(
    `  tunnels    https://<name>.${config.sharedDomain}:${server.httpsPort} and http://<name>.${config.sharedDomain}:${server.httpPort}\n`,
  );
  out.write(`  data       ${config.dataDir}\n`);
  if (server.cluster) out.write(`  cluster    node ${config.nodeId}, peers reach it at ${server.cluster.nodeUrl}\n`);
  if (server.devCa) {
    out.write(`  dev CA     ${server.devCa.certPath}\n`);
    out.write(`             trust it to avoid certificate warnings, e.g.:\n`);
    out.write(`               curl --cacert ${server.devCa.certPath} https://<name>.${config.sharedDomain}:${server.httpsPort}/\n`);
    out.write(`               NODE_EXTRA_CA_CERTS=${server.devCa.certPath} node …\n`);
    out.write(
      `               Debian/Ubuntu: sudo cp ${server.devCa.certPath} /usr/local/share/ca-certificates/svcrouter-dev.crt && sudo update-ca-certificates\n`,
    );
  }
  if ((await server.store.accounts.count()) === 0) {
    let created;
    try {
      created = await createAccountWithToken(server.store, { email: LOCAL_ACCOUNT_EMAIL, name: 'local', plan: 'free' });
    } catch (error) {
      // Several nodes starting together on an empty PostgreSQL: one of them creates it.
      if (error instanceof StoreConflictError) return;
      throw error;
    }
    const { account, token } = created;
    const serverHint = server.httpPort === 8080 ? '' : `SVC_SERVER=${apexHttp} `;
    out.write(`\nCreated a local account (${LOCAL_ACCOUNT_EMAIL}). Its agent token is shown once:\n`);
    out.write(`  ${token}\n`);
    out.write(`Expose a local port with:\n`);
    out.write(`  SVC_TOKEN=${token} ${serverHint}npx svc http 3000\n`);
    out.write(`\n`);
    await printSignInLink(server.store, account.id, apexHttp, out);
  }
}
