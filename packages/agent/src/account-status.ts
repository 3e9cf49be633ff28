import { ApiClient } from '@svcrouter/sdk';
import type { ScreenStatus } from './output.js';

/**
 * The account and plan for the live screen, from GET /v1/me and /v1/usage with the agent's
 * token. Resolves with what it could learn: the screen is useful without it (an edge behind a
 * dev CA the runtime's fetch does not trust, an older server), so a failure is never an error.
 */
export async function accountStatus(server: string, token: string): Promise<ScreenStatus> {
  try {
    const client = new ApiClient({ baseUrl: server, token });
    const [me, usage] = await Promise.all([client.me(), client.usage()]);
    const tunnels = `${usage.used.tunnels} of ${usage.limits.tunnels} tunnels`;
    return { account: me.email, plan: `${usage.plan}, ${tunnels}` };
  } catch {
    return { account: 'unavailable' };
  }
}
