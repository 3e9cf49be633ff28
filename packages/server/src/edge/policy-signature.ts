import type { TunnelPolicy } from '@svcrouter/protocol';

/**
 * What two pool members must agree on for visitors to meet one lock whichever member serves
 * them: the policy with each basic-auth user's name only (every agent salts its hashes anew, so
 * the hashes of one password differ), keys in a fixed order. Held in memory only.
 */
export function policySignature(policy: TunnelPolicy | undefined): string {
  if (policy === undefined) return '';
  const comparable = policy.basicAuth === undefined ? policy : { ...policy, basicAuth: policy.basicAuth.map(({ user }) => user).sort() };
  return canonicalJson(comparable);
}

/** JSON with every object's keys sorted, so that the order a caller wrote them in does not count. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonicalJson(field)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
