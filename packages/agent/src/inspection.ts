import { Inspector } from '@svcrouter/sdk';
import type { InspectFlags } from './args.js';
import { DEFAULT_INSPECT_ADDR, type InspectorConfig } from './config-schema.js';
import type { Failure } from './failure.js';
import { startInspectorServer, type InspectorServer } from './inspector/server.js';
import type { TunnelControlSlot } from './inspector/tunnels-api.js';

/** A running local inspector: the capture the tunnels share, and its web UI and API. */
export interface Inspection {
  inspector: Inspector;
  server: InspectorServer;
}

/**
 * Starts the local inspector (and, with `tunnels`, the agent API on its port) unless turned off. Flags win over the config file, which wins
 * over the defaults (on, DEFAULT_INSPECT_ADDR, the SDK's body and request limits).
 */
export async function startInspection(
  flags: InspectFlags,
  file: InspectorConfig | undefined,
  tunnels?: TunnelControlSlot,
): Promise<Inspection | Failure | undefined> {
  if (!(flags.enabled ?? file?.enabled ?? true)) return undefined;
  const addr = flags.addr ?? file?.addr ?? DEFAULT_INSPECT_ADDR;
  const inspector = new Inspector({ maxBodyBytes: file?.maxBodyBytes, maxRequests: file?.maxRequests });
  try {
    return { inspector, server: await startInspectorServer(inspector, addr, tunnels) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      sentence: code ? `cannot start the local inspector on ${addr} (${code})` : (error as Error).message,
      hint: 'pick another address with --inspect-addr 127.0.0.1:<port>, or turn the inspector off with --inspect=false',
    };
  }
}
