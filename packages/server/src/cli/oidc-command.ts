import type { ServerConfig } from '../config.js';
import { newSigningKey, openSigningKey, planKeys, RETAIN_AFTER_SUCCESSOR_MS, type Sealer } from '../oidc/index.js';
import { openStore } from '../store/index.js';
import type { CliIo } from './account-command.js';

const USAGE = 'usage: svc-server oidc rotate-key | svc-server oidc keys [--json]\n';

/** What the command needs besides the config: the box that seals keys (main.ts loads it). */
export interface OidcCommandDeps {
  loadSealer(): Promise<Sealer>;
  now?: () => number;
}

/**
 * `svc-server oidc rotate-key`: stores a new ES256 signing key of X-Svc-Identity, published by
 * every node at once and signed with from SVC_OIDC_KEY_ACTIVATION_SECONDS on; the key it
 * replaces stays published RETAIN_AFTER_SUCCESSOR_MS longer, then the nodes drop it.
 * `svc-server oidc keys`: the keys and where each is in that schedule.
 */
export async function runOidcCommand(
  args: string[],
  config: ServerConfig,
  io: Pick<CliIo, 'stdout' | 'stderr'>,
  deps: OidcCommandDeps,
): Promise<number> {
  const [action, ...rest] = args;
  const json = rest.length === 1 && rest[0] === '--json';
  const valid = (action === 'rotate-key' && rest.length === 0) || (action === 'keys' && (rest.length === 0 || json));
  if (!valid) {
    io.stderr.write(USAGE);
    return 2;
  }
  const now = deps.now ?? Date.now;
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const repo = store.oidc;
    if (action === 'keys') {
      const plans = planKeys(await repo.signingKeys(), now());
      if (json) {
        const keys = plans.map(({ key, state, dropAt }) => ({
          kid: key.kid,
          state,
          createdAt: key.createdAt,
          activeAt: key.activeAt,
          dropAt: dropAt ?? null,
        }));
        io.stdout.write(`${JSON.stringify({ keys }, null, 2)}\n`);
        return 0;
      }
      if (plans.length === 0) {
        io.stdout.write('No signing key yet: the first svc-server start with SVC_OIDC_PROVIDERS stores one.\n');
        return 0;
      }
      const rows = [
        ['KID', 'STATE', 'CREATED', 'SIGNS FROM', 'DROPPED AT'],
        ...plans.map(({ key, state, dropAt }) => [
          key.kid,
          state,
          iso(key.createdAt),
          iso(key.activeAt),
          dropAt === undefined ? '-' : iso(dropAt),
        ]),
      ];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
      for (const row of rows)
        io.stdout.write(
          `${row
            .map((cell, i) => cell.padEnd(widths[i]!))
            .join('  ')
            .trimEnd()}\n`,
        );
      return 0;
    }
    const sealer = await deps.loadSealer();
    const stored = await repo.signingKeys();
    // A key sealed under another secret would be stored unreadable for the nodes: refuse first.
    for (const key of stored) openSigningKey(sealer, key);
    const at = now();
    const delayMs = config.oidcKeyActivationSeconds * 1000;
    const key = newSigningKey(sealer, at, at + delayMs);
    await repo.addSigningKey(key);
    const replaced = planKeys(stored, at).find((plan) => plan.state === 'signing')?.key;
    io.stdout.write(
      `New signing key ${key.kid}: published now, signs from ${iso(key.activeAt)} (in ${config.oidcKeyActivationSeconds} s).\n`,
    );
    if (replaced !== undefined)
      io.stdout.write(`The key it replaces, ${replaced.kid}, stays published until ${iso(key.activeAt + RETAIN_AFTER_SUCCESSOR_MS)}.\n`);
    return 0;
  } catch (error) {
    io.stderr.write(`svc-server oidc: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await store.close();
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}
