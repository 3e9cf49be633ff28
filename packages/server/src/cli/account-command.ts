import { createAccountWithToken, passwordProblem, setAccountPassword } from '../auth/index.js';
import type { ServerConfig } from '../config.js';
import { notifyNodes } from '../cluster/index.js';
import { openStore, PLANS, StoreConflictError, type Plan, type Store } from '../store/index.js';
import { parseFlags } from './parse-flags.js';
import { readSecret, type SecretInput } from './read-secret.js';
import { apexHttpUrl, printSignInLink } from './sign-in-link-text.js';

/** The streams a CLI command talks through (process.* in main.ts, fakes in tests). */
export interface CliIo {
  stdin: SecretInput;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const USAGE =
  'usage: svc-server account create --email E [--name N] [--plan free|pro] [--password-stdin]\n' +
  '       svc-server account plan --email E --plan free|pro\n' +
  '       svc-server account password --email E\n' +
  '       svc-server account link --email E\n';

const ACTIONS = {
  create: { flags: ['email', 'name', 'plan'], switches: ['password-stdin'] },
  plan: { flags: ['email', 'plan'], switches: [] },
  password: { flags: ['email'], switches: [] },
  link: { flags: ['email'], switches: [] },
} as const;
type Action = keyof typeof ACTIONS;

/**
 * `svc-server account create|plan|password|link`: works against the same store as a running
 * server (SQLite in WAL mode allows a second process; PostgreSQL is shared anyway).
 */
export async function runAccountCommand(args: string[], config: ServerConfig, io: CliIo): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || !Object.hasOwn(ACTIONS, name)) {
    io.stderr.write(USAGE);
    return 2;
  }
  const action = name as Action;
  const fail = (message: string, code = 2): number => {
    io.stderr.write(`svc-server account ${action}: ${message}\n`);
    return code;
  };
  const flags = parseFlags(rest, ACTIONS[action].flags, ACTIONS[action].switches);
  if (typeof flags === 'string') return fail(flags);
  if (!flags.email) return fail('--email is required');
  const plan = flags.plan ?? (action === 'create' ? 'free' : undefined);
  if ((action === 'create' || action === 'plan') && (!plan || !(PLANS as readonly string[]).includes(plan))) {
    return fail(`--plan must be one of ${PLANS.join(', ')}`);
  }

  // The password is read and checked before the store opens: a typo costs nothing.
  let password: string | undefined;
  if (action === 'password' || flags['password-stdin']) {
    password = await readSecret(io.stdin, io.stderr, `New dashboard password for ${flags.email}: `);
    if (password === undefined) return fail('no password given (stdin ended before a line)');
    const problem = passwordProblem(password);
    if (problem) return fail(problem);
  }

  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    if (action === 'create') {
      const { account, token } = await createAccountWithToken(store, { email: flags.email, name: flags.name, plan: plan as Plan });
      if (password !== undefined) await setAccountPassword(store, account.id, password);
      io.stdout.write(
        `Created account ${account.email} (${account.id}, plan ${account.plan})${password === undefined ? '' : ' with a dashboard password'}.\n`,
      );
      io.stdout.write(`Agent token (shown once, store it now):\n${token}\n`);
      return 0;
    }
    const account = await store.accounts.byEmail(flags.email);
    if (!account) return fail(`no account with email ${flags.email}`, 1);
    return await runOnAccount(action, store, account.id, { plan: plan as Plan, password: password!, email: account.email }, config, io);
  } catch (error) {
    if (error instanceof StoreConflictError) return fail(`an account with email ${flags.email} already exists`, 1);
    return fail((error as Error).message, 1);
  } finally {
    await store.close();
  }
}

async function runOnAccount(
  action: Exclude<Action, 'create'>,
  store: Store,
  accountId: string,
  input: { plan: Plan; password: string; email: string },
  config: ServerConfig,
  io: CliIo,
): Promise<number> {
  if (action === 'plan') {
    await store.accounts.setPlan(accountId, input.plan);
    io.stdout.write(`Account ${input.email} is now on the ${input.plan} plan.\n`);
    // The nodes end the newest tunnels beyond the new limit (edge/plan-watch.ts): say so before it happens.
    const limit = config.plans[input.plan].tunnels;
    const online = await store.tunnels.countOnline(accountId);
    if (online > limit) {
      io.stdout.write(`It has ${online} tunnels online and the plan allows ${limit}: the ${online - limit} newest are being ended.\n`);
    }
    // Running nodes re-read the plan within a minute on their own; nodes of a cluster listen, so tell them now.
    if (config.databaseUrl !== undefined) {
      await notifyNodes(config.databaseUrl, { k: 'plan', a: accountId }).catch((error: unknown) =>
        io.stderr.write(`Running nodes were not told (${(error as Error).message}); they read the new plan within a minute.\n`),
      );
    }
  } else if (action === 'password') {
    // Every browser signed in with the old password is signed out.
    await setAccountPassword(store, accountId, input.password);
    io.stdout.write(`Set the dashboard password of ${input.email}; its dashboard sessions were signed out.\n`);
  } else {
    await printSignInLink(store, accountId, apexHttpUrl(config.sharedDomain, config.httpPort), io.stdout);
  }
  return 0;
}
