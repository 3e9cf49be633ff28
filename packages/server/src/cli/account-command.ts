import { createAccountWithToken } from '../auth/index.js';
import type { ServerConfig } from '../config.js';
import { openStore, PLANS, StoreConflictError, type Plan } from '../store/index.js';
import { parseFlags } from './parse-flags.js';

/**
 * `svc-server account create|plan`: works against the same store as a running server
 * (SQLite in WAL mode allows a second process; PostgreSQL is shared anyway).
 */
export async function runAccountCommand(
  args: string[],
  config: ServerConfig,
  stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream,
): Promise<number> {
  const [action, ...rest] = args;
  if (action !== 'create' && action !== 'plan') {
    stderr.write('usage: svc-server account create --email E [--name N] [--plan free|pro] | account plan --email E --plan free|pro\n');
    return 2;
  }
  const flags = parseFlags(rest, action === 'create' ? ['email', 'name', 'plan'] : ['email', 'plan']);
  if (typeof flags === 'string') {
    stderr.write(`svc-server account ${action}: ${flags}\n`);
    return 2;
  }
  if (!flags.email) {
    stderr.write(`svc-server account ${action}: --email is required\n`);
    return 2;
  }
  const plan = flags.plan ?? (action === 'create' ? 'free' : undefined);
  if (!plan || !(PLANS as readonly string[]).includes(plan)) {
    stderr.write(`svc-server account ${action}: --plan must be one of ${PLANS.join(', ')}\n`);
    return 2;
  }
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    if (action === 'create') {
      const { account, token } = await createAccountWithToken(store, { email: flags.email, name: flags.name, plan: plan as Plan });
      stdout.write(`Created account ${account.email} (${account.id}, plan ${account.plan}).\n`);
      stdout.write(`Agent token (shown once, store it now):\n${token}\n`);
      return 0;
    }
    const account = await store.accounts.byEmail(flags.email);
    if (!account) {
      stderr.write(`svc-server account plan: no account with email ${flags.email}\n`);
      return 1;
    }
    await store.accounts.setPlan(account.id, plan as Plan);
    stdout.write(`Account ${account.email} is now on the ${plan} plan.\n`);
    return 0;
  } catch (error) {
    if (error instanceof StoreConflictError) {
      stderr.write(`svc-server account create: an account with email ${flags.email} already exists\n`);
      return 1;
    }
    stderr.write(`svc-server account ${action}: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await store.close();
  }
}
