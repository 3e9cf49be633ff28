/** Default server address: the embedded `svc-server` on this machine (edge and REST API). */
export const DEFAULT_SERVER_URL = 'http://localhost:8080';

/** The documented `SVC_*` variables the SDK falls back on when an option is left out. */
export type SvcVariable = 'SVC_TOKEN' | 'SVC_SERVER' | 'SVC_SUBDOMAIN' | 'SVC_DOMAIN' | 'SVC_HOST_HEADER';

/**
 * Reads one documented default from the environment, at the moment an ApiClient or a tunnel is
 * created (never later, so a running client does not change under its caller). An empty
 * variable counts as unset, as in the agent.
 */
export function envDefault(name: SvcVariable): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}
